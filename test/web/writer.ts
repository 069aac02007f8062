/**
 * "Someone else" writing to the tree while the page is open: the real `kvspace` CLI (built, in
 * dist/) with KVSPACE set to the server's URL; when dist/ has not been built, the HTTP API directly,
 * as any other client would.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "./harness.js";

const run = promisify(execFile);
const CLI = join(ROOT, "dist", "cli", "kvspace.js");

export interface Writer {
  /** How writes are made, for the test log. */
  via: "cli" | "http";
  /** `kvspace set <key> <literal>`, e.g. `string:hello`, `int:3`. */
  set(key: string, literal: string): Promise<void>;
}

export async function createWriter(url: string, token?: string): Promise<Writer> {
  const env = { ...process.env, KVSPACE: url, ...(token ? { BYTESEEK_TOKEN: token } : {}) };
  if (existsSync(CLI))
    return {
      via: "cli",
      async set(key, literal) {
        await run(process.execPath, [CLI, "set", key, literal], { env });
      },
    };
  return {
    via: "http",
    async set(key, literal) {
      const colon = literal.indexOf(":");
      const tag = literal.slice(0, colon);
      const body = literal.slice(colon + 1);
      const typed =
        tag === "int"
          ? { kind: "int64", value: body }
          : tag === "json"
            ? { kind: "json", value: JSON.parse(body) }
            : tag === "bool"
              ? { kind: "bool", value: body === "true" }
              : { kind: "char/utf8", value: body };
      const res = await fetch(`${url}/v1/tree${key.split("/").map(encodeURIComponent).join("/")}`, {
        method: "PUT",
        headers: {
          "content-type": "application/json",
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(typed),
      });
      if (!res.ok) throw new Error(`PUT ${key}: ${res.status} ${await res.text()}`);
    },
  };
}
