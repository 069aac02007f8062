/**
 * Every entry point withdraws the secrets of its environment, by name and by value (issue 31, item
 * 7): `byteseek mcp` and `kvspace call` started as real processes with credentials under names the
 * old pattern missed, a URL with a password and a copy under an innocent name; the test reads each
 * one's /proc/<pid>/environ while it runs, and what a command it ran was given.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BYTESEEK_BIN } from "../mcp/helpers.js";
import { eventually, tempDir } from "../server/helpers.js";

const KVSPACE_BIN = fileURLToPath(new URL("../../dist/cli/kvspace.js", import.meta.url));

const SECRETS = {
  BYTESEEK_TOKEN: "tok-entry-5c1e9a7b3d",
  GITHUB_AUTH: "gh-auth-entry-4d2c8e1a9b",
  NPM_CONFIG__AUTH: "npm-auth-entry-7e3f1a0c5d",
  SOME_PASSPHRASE: "passphrase-entry-2b4d6f8a",
  DATABASE_URL: "postgres://app:db-pw-entry-3e5a7c9b@db.example/app",
  LABEL_COPY: "tok-entry-5c1e9a7b3d",
};

const leaked = (text: string): string[] =>
  Object.entries(SECRETS)
    .filter(([, value]) => text.includes(value.includes("@") ? "db-pw-entry" : value))
    .map(([name]) => name);

let dir: Awaited<ReturnType<typeof tempDir>>;
const children: ChildProcess[] = [];
beforeEach(async () => {
  if (!existsSync(KVSPACE_BIN)) throw new Error("dist/ is missing: run `npm run build` first");
  dir = await tempDir("byteseek-secrets-entry-");
  await mkdir(join(dir.path, "ws"));
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  await dir.remove();
});

function start(bin: string, args: string[]): ChildProcess {
  const child = spawn(process.execPath, [bin, ...args], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir.path,
      KVSPACE: join(dir.path, "store"),
      BYTESEEK_WORKSPACE: join(dir.path, "ws"),
      PROJECT_SETTING: "plain",
      ...SECRETS,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  return child;
}

async function environOf(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/environ`, "latin1")).replaceAll("\0", "\n");
}

describe("the secrets of an entry point's environment (read from outside, while it runs)", () => {
  it("are gone from byteseek mcp's environ, the rest kept", async () => {
    const child = start(BYTESEEK_BIN, ["mcp"]);
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stdin?.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "probe", version: "1" } } })}\n`,
    );
    await eventually(() => out.includes('"id":1'), "byteseek mcp's initialize answer");
    const environ = await environOf(child.pid as number);
    expect(leaked(environ)).toEqual([]);
    expect(environ).toContain("PROJECT_SETTING=plain");
  });

  it("are gone from kvspace call's environ, and the command it runs gets none of them", async () => {
    const ws = join(dir.path, "ws");
    // the command says what it got, then waits (boundedly) for the test to have looked
    const command =
      "env > env.txt; touch ready; i=0; while [ ! -f go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done";
    const child = start(KVSPACE_BIN, ["call", "shell.run", JSON.stringify({ command })]);
    let err = "";
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.once("exit", r));
    await eventually(() => existsSync(join(ws, "ready")) || child.exitCode !== null, "the command to start");
    expect(child.exitCode, err).toBeNull();
    const environ = await environOf(child.pid as number);
    await writeFile(join(ws, "go"), "");
    expect(leaked(environ)).toEqual([]);
    expect(environ).toContain("PROJECT_SETTING=plain");
    expect(await exited, err).toBe(0);
    const given = await readFile(join(ws, "env.txt"), "utf8");
    expect(leaked(given)).toEqual([]);
    expect(given).not.toContain("PROJECT_SETTING");
  });
});
