import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";

const ROOT = join(import.meta.dirname, "..", "..");
const FIXTURE = join(ROOT, "test", "fixtures", "server-run.mjs");

/** A byteseek server running from dist/ in a child process, as `byteseek serve` runs. */
export interface ServerChild {
  child: ChildProcess;
  pid: number;
  url: string;
  /** Sends a JSON request; answers status and parsed body. */
  json(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** Calls a tool through the HTTP API. */
  call(name: string, args: Record<string, unknown>): Promise<ToolAnswer>;
  stop(): Promise<void>;
}

export interface ToolAnswer {
  kind: string;
  isError: boolean;
  text: string;
  details: Record<string, unknown>;
}

/**
 * Starts the built server with exactly `env` (plus PATH and HOME) in its environment: KVSPACE,
 * BYTESEEK_WORKSPACE and the rest are the caller's to give; `args` are `byteseek serve`'s
 * (`--no-auth`). Answers once it listens.
 */
export async function startServerChild(
  env: Record<string, string>,
  args: string[] = [],
): Promise<ServerChild> {
  if (!existsSync(join(ROOT, "dist", "server", "main.js")))
    throw new Error("dist/ is missing: run `npm run build` first");
  const child = spawn(process.execPath, [FIXTURE, ...args], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      BYTESEEK_PORT: "0",
      BYTESEEK_HOST: "127.0.0.1",
      BYTESEEK_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr!.on("data", (d) => {
      err += d;
    });
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /\{"listening":"([^"]+)"\}/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before listening: ${err}${out}`)));
  });
  const auth: Record<string, string> = env.BYTESEEK_TOKEN
    ? { authorization: `Bearer ${env.BYTESEEK_TOKEN}` }
    : {};
  async function json(method: string, path: string, body?: unknown) {
    const res = await request(`${url}${path}`, {
      method: method as "GET",
      headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? (JSON.parse(text) as unknown) : undefined };
  }
  return {
    child,
    pid: child.pid!,
    url,
    json,
    async call(name, args) {
      const r = await json("POST", `/v1/tools/${name}/call`, { args, vid: "attack" });
      return r.body as ToolAnswer;
    },
    stop() {
      return new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      });
    },
  };
}
