/**
 * `byteseek mcp [--vid V]`: MCP over stdio on the store KVSPACE names — a folder (the runtime
 * in-process), `etcd://…` (likewise, sharing the tree with the servers on it), or `http://…` of a
 * running byteseek server (its tree and its tool routes, so the server's runtime makes and records
 * every call). stdout carries the protocol only; logs go to stderr (BYTESEEK_LOG_LEVEL, default
 * warn). Answers once the client closes stdin (or on SIGINT/SIGTERM).
 */
import { resolve } from "node:path";
import pino, { type Logger } from "pino";
import type { LiveTree } from "../mcp/live.js";
import type { McpFactory } from "../mcp/server.js";
import type { McpSource } from "../mcp/source.js";
import { readStoreToken } from "../server/token-file.js";
import { isTreeError } from "../tree/errors.js";
import { sharePath } from "../tree/held-socket.js";
import { openHttpTree } from "../tree/http/index.js";
import type { Tree } from "../tree/types.js";
import { CliError } from "./errors.js";
import { type Reached, relayMcp } from "./mcp-relay.js";
import { isLockedError, openStore, storeSpec } from "./open-store.js";

interface Opened {
  source: McpSource;
  /** Where the file tools work (in-process runtimes; a server's URL keeps its own). */
  workspace?: string;
  /**
   * On a folder: serves its share socket (the HTTP API for `kvspace` and `byteseek run`, relayed
   * MCP sessions on this process's factory and feed) until closed.
   */
  share?: (mcp: { factory: McpFactory; live: LiveTree }) => Promise<{ close(): Promise<void> }>;
  close(): Promise<void>;
}

/**
 * What serving a store takes, loaded when this process serves one: a relay to the process holding
 * the folder (the common case beside a server) starts without the runtime, the MCP server or the share.
 */
const load = {
  compose: () => import("../compose/byteseek.js"),
  holdShare: () => import("./hold-share.js"),
  live: () => import("../mcp/live.js"),
  server: () => import("../mcp/server.js"),
  source: () => import("../mcp/source.js"),
  stdio: () => import("../mcp/stdio.js"),
  toolsClient: () => import("./tools-client.js"),
};

async function openSource(env: NodeJS.ProcessEnv, cwd: string, logger: Logger): Promise<Opened> {
  const spec = storeSpec(env, cwd);
  if (spec.backend === "http") {
    const { openToolsClient } = await load.toolsClient();
    const tree = await openHttpTree(new URL(spec.url), env).catch((err: unknown) => {
      throw unreachable(err, spec.url);
    });
    const tools = await openToolsClient({ tree, env, cwd, stderr: process.stderr });
    try {
      // The tree's check reaches an open route: make sure the token opens the tool routes too.
      await tools.list();
    } catch (err) {
      await tools.close();
      await tree.close();
      throw err;
    }
    return {
      source: {
        tree,
        async tools() {
          return (await tools.list()).tools;
        },
        call: (name, args, options) => tools.call(name, args, options),
        async systemPrompt(vid) {
          return (await tools.prompt(vid)).system;
        },
      },
      async close() {
        await tools.close();
        await tree.close();
      },
    };
  }
  const tree: Tree = await openStore({ env, cwd, logger: logger.child({ part: "tree" }) });
  try {
    const [{ createByteseek }, { holdShare }, { runtimeSource }] = await Promise.all([
      load.compose(),
      load.holdShare(),
      load.source(),
    ]);
    const bs = await createByteseek({
      tree,
      workspace: workspaceOf(env, cwd),
      logger,
      env,
      ...(spec.backend === "classic" ? { storePath: spec.location } : {}),
    });
    return {
      source: runtimeSource(tree, bs.runtime, bs.search),
      workspace: bs.runtime.workspace,
      // On a folder (which only this process can open): its share socket (cli/hold-share.ts).
      ...(spec.backend === "classic"
        ? {
            share: (mcp: { factory: McpFactory; live: LiveTree }) =>
              holdShare({
                tree,
                byteseek: bs,
                folder: spec.location,
                env,
                logger,
                holder: "mcp",
                workspace: workspaceOf(env, cwd),
                mcp,
              }),
          }
        : {}),
      async close() {
        await bs.close();
        await tree.close();
      },
    };
  } catch (err) {
    await tree.close();
    throw err;
  }
}

/**
 * A server's URL that does not answer: what to do, since a host shows only "connection closed" —
 * start the server, or name its store folder (reached through its socket while a server holds it).
 */
function unreachable(err: unknown, url: string): unknown {
  if (!isTreeError(err, "TREE_UNAVAILABLE")) return err;
  return new CliError(
    "CLI_STORE_UNAVAILABLE",
    `${err.message}\nKVSPACE=${url} names a byteseek server: start it (byteseek serve, or npm start in its checkout), ` +
      "or set KVSPACE to its store folder (e.g. /path/to/byteseek/data), which works whether a server holds it or not",
    { cause: err },
  );
}

/**
 * What a relay says on stderr when the holder's workspace is not the one it was started for: the
 * calls run in the holder's (one store, one workspace), and how to work in its own instead.
 */
export function workspaceNote(
  store: string,
  asked: string,
  holder: Pick<Reached, "holder" | "workspace">,
  told: string | undefined,
): string | undefined {
  if (holder.workspace === undefined || holder.workspace === asked || holder.workspace === told)
    return undefined;
  const who =
    holder.holder === "serve"
      ? "a byteseek serve"
      : holder.holder === "run"
        ? "a byteseek run or chat"
        : "another byteseek mcp";
  return (
    `byteseek mcp: the store ${store} is held by ${who} whose workspace is ${holder.workspace}: ` +
    `this session's file tools work there, not in ${asked}. To work in ${asked}, give this session ` +
    `a store of its own (KVSPACE=<another folder>), or start the holder with BYTESEEK_WORKSPACE=${asked}`
  );
}

/** The root the file tools touch: BYTESEEK_WORKSPACE, or the folder the host started us in. */
function workspaceOf(env: NodeJS.ProcessEnv, cwd: string): string {
  return resolve(cwd, env.BYTESEEK_WORKSPACE || ".");
}

/** The store opened and served to MCP: its factory and change feed, and (on a folder) the relays' socket. */
interface Serving {
  factory: McpFactory;
  live: LiveTree;
  close(): Promise<void>;
}

async function openServing(env: NodeJS.ProcessEnv, cwd: string, logger: Logger): Promise<Serving> {
  const opened = await openSource(env, cwd, logger);
  const [{ createLiveTree }, { createMcpFactory }] = await Promise.all([load.live(), load.server()]);
  const live = createLiveTree(opened.source.tree, logger);
  const factory = createMcpFactory({
    source: opened.source,
    logger,
    live,
    ...(opened.workspace === undefined ? {} : { workspace: opened.workspace }),
  });
  let shared: { close(): Promise<void> } | undefined;
  try {
    // A socket that cannot be made is a warning (listenShared): this process still serves its client.
    shared = await opened.share?.({ factory, live });
  } catch (err) {
    live.close();
    await opened.close();
    throw err;
  }
  return {
    factory,
    live,
    async close() {
      await shared?.close();
      live.close();
      await opened.close();
    },
  };
}

/** Resolves when the client closes stdin, or on SIGINT/SIGTERM. */
function clientLeaves(): Promise<void> {
  return new Promise<void>((done) => {
    const stop = () => done();
    process.stdin.once("end", stop);
    process.stdin.once("close", stop);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

export async function runMcp(options: {
  vid?: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
}): Promise<number> {
  const { env, cwd, vid } = options;
  const logger = pino({ level: env.BYTESEEK_LOG_LEVEL || "warn" }, pino.destination(2)).child({
    part: "mcp",
  });
  const spec = storeSpec(env, cwd);
  // A folder is held by one process: hold it and serve relays, or relay to whoever holds it.
  const socket = spec.backend === "classic" ? await sharePath(spec.location, env) : undefined;
  const hold = async (): Promise<Serving | undefined> => {
    try {
      return await openServing(env, cwd, logger);
    } catch (err) {
      if (socket !== undefined && isLockedError(err)) return undefined;
      throw err;
    }
  };
  let serving = await hold();
  if (serving === undefined && socket !== undefined && spec.backend === "classic") {
    const folder = spec.location;
    /** The holder's workspace last told on stderr (a successor with the same one is not told again). */
    let told: string | undefined;
    const leave = () => process.stdin.destroy();
    process.once("SIGINT", leave);
    process.once("SIGTERM", leave);
    try {
      await relayMcp({
        path: socket,
        hello: { byteseek: "relay", version: 2, workspace: workspaceOf(env, cwd) },
        // the holder's credential, read afresh for each holder reached
        token: async () => {
          try {
            return env.BYTESEEK_TOKEN || (await readStoreToken(folder));
          } catch (err) {
            // a token file that may not be trusted: say so, do not retry
            throw new CliError("CLI_MCP_REFUSED", (err as Error).message, { cause: err });
          }
        },
        onAttached(holder) {
          // the holder names a relayed session's run: --vid cannot pick one here
          if (vid !== undefined)
            logger.warn(
              { asked: vid },
              `another byteseek process holds the store: this session's calls are recorded as the run it names (mcp-<client>-<n>), not ${vid} (the holder gives a relayed session its run id)`,
            );
          const note = workspaceNote(folder, workspaceOf(env, cwd), holder, told);
          if (note !== undefined) {
            told = holder.workspace;
            process.stderr.write(`${note}\n`);
          }
        },
        stdin: process.stdin,
        stdout: process.stdout,
        logger,
        takeOver: async () => {
          serving ??= await hold();
          return serving !== undefined;
        },
      });
    } finally {
      // stdin would keep the process alive after a refusal
      process.stdin.destroy();
      await (serving as Serving | undefined)?.close();
    }
    return 0;
  }
  if (serving === undefined) throw new Error("unreachable: only a folder is ever locked");
  const { serveMcpStdio } = await load.stdio();
  const stdio = serveMcpStdio({
    factory: serving.factory,
    live: serving.live,
    logger,
    ...(vid === undefined ? {} : { vid }),
  });
  await clientLeaves();
  await stdio.close();
  await serving.close();
  return 0;
}
