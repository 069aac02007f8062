import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";
import { afterAll, beforeAll } from "vitest";
import { type App, type AppDeps, buildApp } from "../../server/app.js";
import { type RunningServer, startServer } from "../../server/main.js";
import { openTree, type TreeOptions } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";

/** A temp folder, removed by the returned function. */
export async function tempDir(
  prefix = "byteseek-server-",
): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A pino logger whose lines are kept (parsed) in `lines`. */
export function captureLogger(): { logger: Logger; lines: Array<Record<string, unknown>>; text(): string } {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) {
        if (l === "") continue;
        raw.push(l);
        lines.push(JSON.parse(l) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines, text: () => raw.join("\n") };
}

export interface TestServer {
  app: App;
  tree: Tree;
  /** `http://127.0.0.1:<port>` */
  url: string;
  logs: ReturnType<typeof captureLogger>;
  close(): Promise<void>;
}

export interface TestServerOptions extends Partial<Omit<AppDeps, "tree" | "logger">> {
  tree?: TreeOptions;
  /** Listen on a socket (default true); false: inject only. */
  listen?: boolean;
  /** Called with the app before it boots (to add a hook, say). */
  prepare?: (app: App) => void;
}

/** A real server: classic-level in a temp folder, fastify on 127.0.0.1 port 0. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = await tempDir();
  const tree = await openTree({ backend: "classic", location: dir.path, ...options.tree });
  const logs = captureLogger();
  const { tree: _t, listen = true, prepare, ...deps } = options;
  const app = await buildApp({ web: false, ...deps, tree, logger: logs.logger });
  prepare?.(app);
  let url = "";
  if (listen) url = await app.listen({ host: "127.0.0.1", port: 0 });
  else await app.ready();
  return {
    app,
    tree,
    url,
    logs,
    async close() {
      await app.close();
      await tree.close();
      await dir.remove();
    },
  };
}

/**
 * Waits until `check` holds, polling; fails after `ms` (a liveness bound, not a timed assertion:
 * generous, as test files share the cores and a child process may take seconds to start).
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 30_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A request on node:http with exactly the headers given: `host` too (clients like undici set it
 * from the URL), so a test can send what a DNS-rebinding page or another site's form would send.
 * An event stream is answered with its headers and first chunk, then closed.
 */
export function rawRequest(
  url: string,
  o: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawAnswer> {
  const { port } = new URL(url);
  const headers = { host: `127.0.0.1:${port}`, ...o.headers };
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method: o.method ?? "GET", path: o.path, headers, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString(),
          });
        if (String(res.headers["content-type"]).startsWith("text/event-stream")) {
          res.once("data", (c: Buffer) => {
            chunks.push(c);
            res.destroy();
            done();
          });
          return;
        }
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", done);
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(o.body);
  });
}

/**
 * `byteseek serve` as server/main.ts starts it (tool runtime, agent, page), once for the whole file
 * (beforeAll/afterAll), in a fresh temp folder that is its current folder. `env(dir)` gives the
 * settings beside BYTESEEK_PORT=0 (KVSPACE among them; BYTESEEK_TOKEN="" for a server without a
 * credential, `--no-auth`, where the file is about something else). The answer stands for the running server
 * and may be read from inside a test or hook only.
 */
export function serveForAll(
  env: (dir: string) => Record<string, string>,
  logger: Logger = pino({ level: "silent" }),
): RunningServer {
  let dir: Awaited<ReturnType<typeof tempDir>> | undefined;
  let running: RunningServer | undefined;
  beforeAll(async () => {
    dir = await tempDir();
    const settings: Record<string, string> = { BYTESEEK_PORT: "0", ...env(dir.path) };
    running = await startServer({
      env: settings,
      // BYTESEEK_TOKEN= (empty) says the file runs the server without a credential, as --no-auth does
      ...(settings.BYTESEEK_TOKEN === "" ? { noAuth: true } : {}),
      cwd: dir.path,
      logger,
      handleSignals: false,
    });
  });
  afterAll(async () => {
    await running?.close();
    await dir?.remove();
  });
  return new Proxy({} as RunningServer, {
    get(_target, key) {
      if (!running) throw new Error("the server runs only inside the file's tests and hooks");
      const value: unknown = Reflect.get(running, key);
      return typeof value === "function" ? value.bind(running) : value;
    },
  });
}

/** A loopback port nothing listens on: one the system just handed out and took back (for a server that takes its port from a setting, or to find nobody there). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
