/**
 * `startServer({env})`: the only place that reads the environment and listens. Used by
 * `byteseek serve` and `npm start`.
 *
 * The store: KVSPACE (a folder, default ./data, or etcd://…) with BYTESEEK_SYNC, BYTESEEK_CACHE and
 * BYTESEEK_HISTORY, read by the tree's `resolveStore` (tree/store-config.ts), as the CLI reads them.
 * The server's BYTESEEK_SYNC defaults to always (the CLI's to never).
 * BYTESEEK_HOST (127.0.0.1), BYTESEEK_PORT (7411), BYTESEEK_TOKEN (the credential; unset: the one
 * kept at <store>/token, made at first start — on etcd, one made for this start; empty, with
 * `noAuth` (`--no-auth`), none), BYTESEEK_ALLOWED_HOSTS (host names besides loopback ones), BYTESEEK_BODY_TIMEOUT (ms
 * to receive a request, default 60000), BYTESEEK_MAX_WATCHES (default 1000), BYTESEEK_MCP_SESSION_IDLE
 * (ms an MCP 2025-era session may sit idle before it is closed, default 1800000; 0: never),
 * BYTESEEK_BODY_LIMIT (bytes, or with a k/m suffix; default 8 MiB), BYTESEEK_WORKSPACE (the root the
 * file tools may touch, default ./workspace, made at start), BYTESEEK_FAST (0: the reference lanes,
 * the libraries' own paths, instead of the fast lanes; tree/fast-lanes.ts; shown at start),
 * BYTESEEK_LLM_* (the model; see agent/llm-config.ts).
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import pino, { type Logger } from "pino";
import { isAgentError } from "../agent/errors.js";
import { clientUrlOrigins } from "../agent/llm-config.js";
import { markInterrupted } from "../agent/runs.js";
import { type Byteseek, createByteseek } from "../compose/byteseek.js";
import { liveReplayTools } from "../compose/replay-tools.js";
import { DEFAULT_SESSION_IDLE_MS } from "../mcp/http.js";
import { createPolicyReader } from "../tools/gate/policy.js";
import { withdrawSecrets } from "../tools/process/secrets.js";
import { sizeText } from "../tools/sandbox/exit.js";
import { type SandboxState, sandboxState } from "../tools/sandbox/probe.js";
import { describeLanes, readFastLanes } from "../tree/fast-lanes.js";
import { sharePath } from "../tree/held-socket.js";
import { describeStore, isTreeError, openTree, resolveStore, type StoreSpec } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import {
  type App,
  buildApp,
  DEFAULT_BODY_LIMIT,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_WATCHES,
} from "./app.js";
import { ServerError } from "./errors.js";
import { hostName } from "./request-guard.js";
import { ensureStoreToken, newToken } from "./token-file.js";

export interface ServerConfig {
  /** The store KVSPACE and the store settings name (never a server's URL). */
  store: Exclude<StoreSpec, { backend: "http" }>;
  host: string;
  port: number;
  /**
   * Where the credential comes from: BYTESEEK_TOKEN (`token`), the store folder's token file (made
   * at first start), one made for this start (etcd: there is no folder to keep it in), or none
   * (`BYTESEEK_TOKEN=` with `--no-auth`).
   */
  auth: "env" | "file" | "start" | "none";
  /** BYTESEEK_TOKEN, when it names one. */
  token?: string;
  bodyLimit: number;
  /** Host names a request may name besides loopback ones (needs a token). */
  allowedHosts: string[];
  /** Time to receive a whole request, ms; 0: no bound. */
  bodyTimeoutMs: number;
  /** The root the file tools may touch (absolute). */
  workspace: string;
  /** No BYTESEEK_WORKSPACE was given: the default folder is made at start. */
  defaultWorkspace: boolean;
  /** Concurrent watches at most. */
  maxWatches: number;
  /** An idle MCP 2025-era session is closed after this long, ms; 0: never. */
  mcpSessionIdleMs: number;
  /** The fast lanes (BYTESEEK_FAST, default on); false: the reference lanes (tree/fast-lanes.ts). */
  fast: boolean;
}

export interface StartServerOptions {
  /** The configuration; default: this process's environment, its secrets withdrawn (tools/process/secrets.ts). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Defaults to pino JSON on stdout (pretty when stdout is a terminal). */
  logger?: Logger;
  /** Install SIGTERM/SIGINT handlers that shut down gracefully (default true). */
  handleSignals?: boolean;
  /** `--no-auth`: run without a credential; only with BYTESEEK_TOKEN set and empty. */
  noAuth?: boolean;
}

export interface RunningServer {
  app: App;
  tree: Tree;
  config: ServerConfig;
  /** `http://host:port` as bound (the real port when 0 was asked). */
  url: string;
  /** The token every request needs (undefined with --no-auth). */
  token: string | undefined;
  /** Where the token is kept, when in the store folder. */
  tokenFile?: string;
  /** The web page's address, with the token when there is one (`/?token=…`): print it once, for a person. */
  pageUrl: string;
  /** Stops accepting, ends watches, finishes in-flight requests, closes the store. */
  close(): Promise<void>;
}

/**
 * The server's workspace when BYTESEEK_WORKSPACE names none: a folder of its own under the current
 * one, never the current folder itself (after `npm start`, that is byteseek's own checkout, and an
 * agent would be editing the server it runs on).
 */
export const DEFAULT_WORKSPACE = "workspace";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost", "[::1]"]);

export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Where the credential comes from. `BYTESEEK_TOKEN=` (set, empty) and `--no-auth` together are the
 * only way to run without one; either alone is a mistake worth stopping for.
 */
function readAuth(
  env: NodeJS.ProcessEnv,
  noAuth: boolean,
  store: ServerConfig["store"],
): Pick<ServerConfig, "auth" | "token"> {
  const given = env.BYTESEEK_TOKEN;
  if (noAuth) {
    if (given === "") return { auth: "none" };
    throw configError(
      given === undefined
        ? "--no-auth runs the server without a credential: anyone who reaches its port can run commands as this user. To mean it, set BYTESEEK_TOKEN to empty as well (BYTESEEK_TOKEN= byteseek serve --no-auth); otherwise drop --no-auth and use the token byteseek makes"
        : "--no-auth and BYTESEEK_TOKEN contradict each other: drop --no-auth to use the token, or set BYTESEEK_TOKEN to empty (BYTESEEK_TOKEN= byteseek serve --no-auth) to run without one",
    );
  }
  if (given === "")
    throw configError(
      "BYTESEEK_TOKEN is set but empty: unset it to use the token kept in the store folder (made at first start), set it to a token, or add --no-auth to run without a credential",
    );
  if (given !== undefined) {
    if (!/^[\x21-\x7e]{1,4096}$/.test(given))
      throw configError(
        "BYTESEEK_TOKEN must be printable characters without spaces (at most 4096); unset it to have byteseek make one",
      );
    return { auth: "env", token: given };
  }
  return { auth: store.backend === "classic" ? "file" : "start" };
}

/** Reads and checks the configuration; throws SERVER_CONFIG saying what is wrong. */
export function readConfig(
  env: NodeJS.ProcessEnv,
  cwd: string = process.cwd(),
  options: { noAuth?: boolean } = {},
): ServerConfig {
  const host = env.BYTESEEK_HOST || "127.0.0.1";
  const portText = env.BYTESEEK_PORT || "7411";
  if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65_535)
    throw configError(`BYTESEEK_PORT must be a port number (0-65535), got ${JSON.stringify(portText)}`);
  const store = readStore(env, cwd);
  const auth = readAuth(env, options.noAuth === true, store);
  if (auth.auth === "none" && !isLoopback(host))
    throw configError(
      `refusing to listen on ${host} without a credential: anyone who can reach it could read and change the store. Drop --no-auth (and BYTESEEK_TOKEN=), or listen on 127.0.0.1`,
    );
  try {
    clientUrlOrigins(env);
  } catch (err) {
    if (isAgentError(err)) throw configError(err.message);
    throw err;
  }
  const config: ServerConfig = {
    store,
    host,
    port: Number(portText),
    bodyLimit: env.BYTESEEK_BODY_LIMIT
      ? parseSize("BYTESEEK_BODY_LIMIT", env.BYTESEEK_BODY_LIMIT)
      : DEFAULT_BODY_LIMIT,
    allowedHosts: readAllowedHosts(env.BYTESEEK_ALLOWED_HOSTS, auth.auth !== "none", host),
    bodyTimeoutMs: readCount(
      "BYTESEEK_BODY_TIMEOUT",
      env.BYTESEEK_BODY_TIMEOUT,
      DEFAULT_BODY_TIMEOUT_MS,
      true,
    ),
    maxWatches: readCount("BYTESEEK_MAX_WATCHES", env.BYTESEEK_MAX_WATCHES, DEFAULT_MAX_WATCHES, false),
    mcpSessionIdleMs: readCount(
      "BYTESEEK_MCP_SESSION_IDLE",
      env.BYTESEEK_MCP_SESSION_IDLE,
      DEFAULT_SESSION_IDLE_MS,
      true,
    ),
    workspace: resolve(cwd, env.BYTESEEK_WORKSPACE || DEFAULT_WORKSPACE),
    defaultWorkspace: !env.BYTESEEK_WORKSPACE,
    fast: readFast(env),
    ...auth,
  };
  return config;
}

/**
 * BYTESEEK_ALLOWED_HOSTS: names (or addresses) a Host header may carry besides loopback ones. They
 * widen what the server answers, so they need a credential; with one, the address it listens on
 * (unless a wildcard) is allowed too.
 */
function readAllowedHosts(text: string | undefined, token: boolean, listen: string): string[] {
  const names = (text ?? "")
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "");
  if (names.length > 0 && !token)
    throw configError(
      "BYTESEEK_ALLOWED_HOSTS needs a credential: without one (--no-auth) the server answers loopback names only",
    );
  for (const n of names)
    if (hostName(n) === undefined)
      throw configError(
        `BYTESEEK_ALLOWED_HOSTS holds ${JSON.stringify(n)}, which is not a host name (name[:port])`,
      );
  if (token && listen !== "0.0.0.0" && listen !== "::" && listen !== "[::]") names.push(listen);
  return names;
}

/** A whole number from the environment; 0 only where it turns a bound off. */
function readCount(name: string, text: string | undefined, fallback: number, zeroAllowed: boolean): number {
  if (text === undefined || text.trim() === "") return fallback;
  const t = text.trim();
  if (!/^[0-9]{1,10}$/.test(t) || (Number(t) === 0 && !zeroAllowed))
    throw configError(
      `${name} must be a whole number${zeroAllowed ? " (0: no bound)" : " above 0"}, got ${JSON.stringify(text)}`,
    );
  return Number(t);
}

/** BYTESEEK_FAST, as the lanes' defaults read it; a wrong value is a SERVER_CONFIG error. */
function readFast(env: NodeJS.ProcessEnv): boolean {
  try {
    return readFastLanes(env);
  } catch (err) {
    if (isTreeError(err, "TREE_INVALID_OPTION")) throw configError(err.message);
    throw err;
  }
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
  // Acknowledged writes survive a power cut unless a person opts out (etcd and ZooKeeper do the same).
  if (store.backend === "classic" && !env.BYTESEEK_SYNC) return { ...store, sync: "always" };
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
  const config = readConfig(env, cwd, { noAuth: options.noAuth === true });
  const logger = options.logger ?? defaultLogger(env);
  if (config.defaultWorkspace) await mkdir(config.workspace, { recursive: true, mode: 0o700 });
  const tree = await openTree({
    ...config.store,
    ...(config.store.backend === "etcd" ? { fast: config.fast } : {}),
    logger: logger.child({ part: "tree" }),
  });
  let app: App;
  let byteseek: Byteseek | undefined;
  let token = config.token;
  let tokenFile: string | undefined;
  try {
    // Made (or read) only now: the store folder exists, and this process holds it.
    if (config.auth === "file" && config.store.backend === "classic") {
      const kept = await ensureStoreToken(config.store.location);
      token = kept.token;
      tokenFile = kept.path;
      if (kept.made) logger.info({ tokenFile }, "made the server's token");
    } else if (config.auth === "start") token = newToken();
    byteseek = await createByteseek({
      tree,
      workspace: config.workspace,
      logger: logger.child({ part: "agent" }),
      // The token stays with the HTTP layer: createByteseek keeps it from every command.
      env,
      ...(config.store.backend === "classic" ? { storePath: config.store.location } : {}),
    });
    // runs a process left `running` when it died are `interrupted`, to be resumed (agent/runs.ts)
    const interrupted = await markInterrupted(byteseek.tree).catch((err: unknown) => {
      logger.warn({ err }, "cannot look for interrupted runs");
      return [];
    });
    if (interrupted.length > 0)
      logger.info(
        { runs: interrupted },
        "marked runs whose process stopped as interrupted (byteseek run --resume <vid>)",
      );
    app = await buildApp({
      // checked: a declaration or policy that does not validate is refused (tools/catalogue/checked-tree.ts)
      tree: byteseek.tree,
      logger,
      runtime: byteseek.runtime,
      agent: byteseek.agent,
      // a replay with liveTools runs the tools again through a byteseek over the replay's tree
      replayLive: liveReplayTools({
        workspace: config.workspace,
        logger: logger.child({ part: "replay" }),
        env,
        ...(config.store.backend === "classic" ? { storePath: config.store.location } : {}),
      }),
      mcp: byteseek.mcp,
      search: byteseek.search,
      models: byteseek.models,
      bodyLimit: config.bodyLimit,
      allowedHosts: config.allowedHosts,
      bodyTimeoutMs: config.bodyTimeoutMs,
      maxWatches: config.maxWatches,
      mcpSessionIdleMs: config.mcpSessionIdleMs,
      fastPath: config.fast,
      fastMcp: config.fast,
      // `byteseek mcp` on this folder relays to this server instead of finding the folder locked
      ...(config.store.backend === "classic"
        ? { mcpShare: { path: await sharePath(config.store.location, env), workspace: config.workspace } }
        : {}),
      ...(token ? { token } : {}),
      store: {
        engine: config.store.backend,
        location: describeStore(config.store),
        ...(config.store.backend === "classic" ? { sync: config.store.sync } : {}),
      },
    });
    await app.listen({ host: config.host, port: config.port });
    // the registered MCP servers sync in the background, then follow the registry
    void byteseek.mcp.start().catch((err: unknown) => logger.error({ err }, "MCP sync at start failed"));
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
  const sandbox = await sandboxAtStart(tree, byteseek);
  logger.info(
    {
      url,
      store: describeStore(config.store),
      ...sync,
      workspace: config.workspace,
      auth:
        token === undefined
          ? "none (--no-auth)"
          : (tokenFile ?? (config.auth === "env" ? "BYTESEEK_TOKEN" : "made for this start")),
      sandbox: sandbox.state,
      // which limits bind beyond the RLIMITs: a command's memory as a whole, its processes as root
      ...(sandbox.state === "on" && sandbox.caps
        ? {
            sandboxCaps: {
              residentBytes: sandbox.caps.memory ? "memory cgroup" : "none (memoryBytes per process only)",
              processes: sandbox.caps.processes ? "pids cgroup" : "RLIMIT_NPROC",
              totalResidentBytes: sandbox.caps.totalMemory
                ? `memory cgroup over every command's${capText(sandbox.totalResidentBytes ?? sandbox.caps.totalMemoryDefault)}`
                : sandbox.caps.memory
                  ? "none (each command capped alone)"
                  : "none",
            },
          }
        : {}),
      lanes: describeLanes(config.fast),
    },
    "listening",
  );
  if (sandbox.warning) logger.warn({ sandbox: sandbox.state }, sandbox.warning);
  // on a wildcard address, the page is reached on this machine's loopback
  const pageBase = ["0.0.0.0", "::", "[::]"].includes(config.host) ? `http://127.0.0.1:${port}` : url;
  const pageUrl = token === undefined ? `${pageBase}/` : `${pageBase}/?token=${encodeURIComponent(token)}`;

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
  return {
    app,
    tree: byteseek.tree,
    config,
    url,
    token,
    ...(tokenFile === undefined ? {} : { tokenFile }),
    pageUrl,
    close,
  };
}

/**
 * What the start line says of the sandbox: on, off (the policy's explicit choice, warned), or
 * unavailable here (every command will be refused: warned with the cause and the setting).
 */
async function sandboxAtStart(
  tree: Tree,
  byteseek: Byteseek,
): Promise<SandboxState & { totalResidentBytes?: number }> {
  const loaded = await createPolicyReader(tree)().catch(() => undefined);
  const state = await sandboxState(
    loaded?.ok ? loaded.policy.sandbox : "on",
    () => byteseek.sandbox.status(),
    () => byteseek.sandbox.caps(),
  );
  const total = loaded?.ok ? loaded.policy.limits.totalResidentBytes : undefined;
  return total === undefined ? state : { ...state, totalResidentBytes: total };
}

/** ", 12 GiB" (the size the start line names beside a cap), or nothing. */
function capText(bytes: number | undefined): string {
  return bytes === undefined ? "" : `, ${sizeText(bytes)}`;
}
