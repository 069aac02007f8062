/**
 * `startServer({env})`: the only place that reads the environment and listens. Used by
 * `byteseek serve` and `npm start`.
 *
 * The store: KVSPACE (a folder, default ./data, or etcd://…) with BYTESEEK_SYNC, BYTESEEK_CACHE and
 * BYTESEEK_HISTORY, read by the tree's `resolveStore` (tree/store-config.ts), as the CLI reads them.
 * BYTESEEK_HOST (127.0.0.1), BYTESEEK_PORT (7411), BYTESEEK_TOKEN (required beyond loopback),
 * BYTESEEK_BODY_LIMIT (bytes, or with a k/m suffix; default 8 MiB), BYTESEEK_WORKSPACE (the root the
 * file tools may touch, default the current folder), BYTESEEK_LLM_* (the model; see agent/llm-config.ts).
 */
import { resolve } from "node:path";
import pino, { type Logger } from "pino";
import { type Byteseek, createByteseek } from "../agent/byteseek.js";
import { withdrawSecrets } from "../tools/process/secrets.js";
import { describeStore, isTreeError, openTree, resolveStore, type StoreSpec } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import { type App, buildApp, DEFAULT_BODY_LIMIT } from "./app.js";
import { ServerError } from "./errors.js";

export interface ServerConfig {
  /** The store KVSPACE and the store settings name (never a server's URL). */
  store: Exclude<StoreSpec, { backend: "http" }>;
  host: string;
  port: number;
  token?: string;
  bodyLimit: number;
}

export interface StartServerOptions {
  /** The configuration; default: this process's environment, its secrets withdrawn (tools/process/secrets.ts). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Defaults to pino JSON on stdout (pretty when stdout is a terminal). */
  logger?: Logger;
  /** Install SIGTERM/SIGINT handlers that shut down gracefully (default true). */
  handleSignals?: boolean;
}

export interface RunningServer {
  app: App;
  tree: Tree;
  config: ServerConfig;
  /** `http://host:port` as bound (the real port when 0 was asked). */
  url: string;
  /** Stops accepting, ends watches, finishes in-flight requests, closes the store. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost", "[::1]"]);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Reads and checks the configuration; throws SERVER_CONFIG saying what is wrong. */
export function readConfig(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): ServerConfig {
  const host = env.BYTESEEK_HOST || "127.0.0.1";
  const portText = env.BYTESEEK_PORT || "7411";
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65_535)
    throw configError(`BYTESEEK_PORT must be a port number (0-65535), got ${JSON.stringify(portText)}`);
  const token = env.BYTESEEK_TOKEN || undefined;
  if (!token && !isLoopback(host))
    throw configError(
      `refusing to listen on ${host} without a token: anyone who can reach it could read and change the store. Set BYTESEEK_TOKEN, or listen on 127.0.0.1`,
    );
  const store = readStore(env, cwd);
  const config: ServerConfig = {
    store,
    host,
    port: Number(portText),
    bodyLimit: env.BYTESEEK_BODY_LIMIT
      ? parseSize("BYTESEEK_BODY_LIMIT", env.BYTESEEK_BODY_LIMIT)
      : DEFAULT_BODY_LIMIT,
  };
  if (token) config.token = token;
  return config;
}

/** The store settings, read as everything else reads them; a refusal is a SERVER_CONFIG error. */
function readStore(env: NodeJS.ProcessEnv, cwd: string): ServerConfig["store"] {
  let store: StoreSpec;
  try {
    store = resolveStore(env, cwd);
  } catch (err) {
    if (isTreeError(err, "TREE_INVALID_OPTION")) throw configError(err.message);
    throw err;
  }
  if (store.backend === "http")
    throw configError(
      `KVSPACE=${env.KVSPACE} is a server's URL; the server needs a store folder or etcd://…`,
    );
  return store;
}

function parseSize(name: string, text: string, zeroAllowed = false): number {
  const m = /^([0-9]+)\s*(k|kb|kib|m|mb|mib)?$/i.exec(text.trim());
  if (!m || (Number(m[1]) === 0 && !zeroAllowed))
    throw configError(`${name} must be a size in bytes (or with k/m), got ${JSON.stringify(text)}`);
  const unit = (m[2] ?? "").toLowerCase();
  return Number(m[1]) * (unit.startsWith("m") ? 1024 * 1024 : unit.startsWith("k") ? 1024 : 1);
}

function configError(message: string): ServerError {
  return new ServerError("SERVER_CONFIG", message);
}

/**
 * pino on stdout at BYTESEEK_LOG_LEVEL (default info): pretty on a terminal; otherwise JSON through
 * an asynchronous destination that writes once 4 KiB have gathered, and at the latest 100 ms after
 * a line (under load, a request line costs a twelfth of a system call, not one; measured 5-10 µs
 * per request saved). pino flushes it when the process exits; a SIGKILL can lose the last 100 ms.
 */
function defaultLogger(env: NodeJS.ProcessEnv): Logger {
  const level = env.BYTESEEK_LOG_LEVEL || "info";
  if (process.stdout.isTTY) return pino({ level, transport: { target: "pino-pretty" } });
  return pino({ level }, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 }));
}

/** Opens the store, builds the app and listens. */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const { cwd = process.cwd(), handleSignals = true } = options;
  // without an environment handed in, this process's is read, and its secrets withdrawn from it first
  const env = options.env ?? withdrawSecrets().env;
  const config = readConfig(env, cwd);
  const logger = options.logger ?? defaultLogger(env);
  const tree = await openTree({ ...config.store, logger: logger.child({ part: "tree" }) });
  let app: App;
  let byteseek: Byteseek | undefined;
  try {
    byteseek = await createByteseek({
      tree,
      workspace: resolve(cwd, env.BYTESEEK_WORKSPACE || "."),
      logger: logger.child({ part: "agent" }),
      env,
    });
    app = await buildApp({
      tree,
      logger,
      runtime: byteseek.runtime,
      agent: byteseek.agent,
      bodyLimit: config.bodyLimit,
      ...(config.token ? { token: config.token } : {}),
    });
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await byteseek?.close();
    await tree.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const hostPart =
    config.host.includes(":") && !config.host.startsWith("[") ? `[${config.host}]` : config.host;
  const url = `http://${hostPart}:${port}`;
  const sync = config.store.backend === "classic" ? { sync: config.store.sync } : {};
  logger.info({ url, store: describeStore(config.store), ...sync, auth: Boolean(config.token) }, "listening");

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await app.close();
      await byteseek?.close();
      await tree.close();
      logger.info("stopped");
    })();
    return closing;
  };

  if (handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      if (closing) {
        logger.warn({ signal }, "second signal: exiting now");
        process.exit(1);
      }
      logger.info({ signal }, "shutting down");
      close().then(
        () => {
          process.off("SIGTERM", onSignal);
          process.off("SIGINT", onSignal);
        },
        (err: unknown) => {
          logger.error({ err }, "shutdown failed");
          process.exitCode = 1;
        },
      );
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }
  return { app, tree, config, url, close };
}
