import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";
import { type App, type AppDeps, buildApp } from "../../server/app.js";
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

/** Waits until `check` holds, polling; fails after `ms` (a liveness bound, not a timed assertion). */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
