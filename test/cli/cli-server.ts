import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { type App, buildApp } from "../../server/app.js";
import { type HistoryLimit, openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";

const silent = pino({ level: "silent" });

/** The environment of a run: this one without anything that would change where or how kvspace runs. */
export function cliEnv(store: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const {
    KVSPACE_DEBUG: _debug,
    BYTESEEK_HOST: _host,
    BYTESEEK_PORT: _port,
    BYTESEEK_TOKEN: _token,
    BYTESEEK_WORKSPACE: _ws,
    BYTESEEK_HISTORY: _history,
    BYTESEEK_SYNC: _sync,
    BYTESEEK_CACHE: _cache,
    BYTESEEK_SEED: _seed,
    ...env
  } = process.env;
  return { ...env, KVSPACE: store, ...extra };
}

/** Temp folders of a test file, removed by `removeAll`. */
export function tempDirs(prefix: string) {
  const dirs: string[] = [];
  return {
    async make(): Promise<string> {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    removeAll: () => Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true }))),
  };
}

export interface CliServerOptions {
  /** The store folder (classic-level). */
  store: string;
  /** The file tools' root. */
  workspace: string;
  /** Write the shipped declarations and prompts at start (as `byteseek serve` does). */
  seed?: boolean;
  token?: string;
  /** Listen on this port (default 0: any). */
  port?: number;
  /** Previous versions kept (the tree's default: 10 under /byteseek/ only). */
  historyLimit?: HistoryLimit;
}

export interface CliServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  tree: Tree;
  app: App;
  byteseek: Byteseek;
  close(): Promise<void>;
}

/** A real byteseek server for kvspace to reach: classic-level store, the runtime, fastify on loopback. */
export async function startCliServer(options: CliServerOptions): Promise<CliServer> {
  const tree = await openTree({
    backend: "classic",
    location: options.store,
    ...(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit }),
  });
  const byteseek = await createByteseek({
    tree,
    workspace: options.workspace,
    logger: silent,
    env: {},
    seed: options.seed ?? false,
  });
  const app = await buildApp({
    // as server/main.ts serves it: declaration and policy writes checked
    tree: byteseek.tree,
    logger: silent,
    runtime: byteseek.runtime,
    web: false,
    ...(options.token ? { token: options.token } : {}),
  });
  const url = await app.listen({ host: "127.0.0.1", port: options.port ?? 0 });
  return {
    url,
    port: Number(new URL(url).port),
    tree,
    app,
    byteseek,
    async close() {
      await app.close();
      await byteseek.runtime.flush();
      await byteseek.close();
      await tree.close();
    },
  };
}
