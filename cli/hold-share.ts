/**
 * What a process holding a store folder serves beside it on the share socket (the store layer's,
 * tree/held-socket.ts and tree/held-listen.ts): the HTTP API for `kvspace` (and `byteseek run|chat`)
 * on the folder, and MCP sessions relayed by other `byteseek mcp` processes (mcp/share.ts) — with the
 * store's token: one module for every holder (`byteseek mcp`, an embedded `byteseek run|chat`;
 * `byteseek serve` serves the same socket from its routes). An embedded `byteseek run` or `chat` holds its
 * folder for the whole turn, so it serves the socket too: the `kvspace approve …` line it prints
 * reaches it, as it would reach a server or a `byteseek mcp`.
 */
import type { Socket } from "node:net";
import type { Logger } from "pino";
import type { Byteseek } from "../compose/byteseek.js";
import type { LiveTree } from "../mcp/live.js";
import type { McpFactory } from "../mcp/server.js";
import type { Relays } from "../mcp/share.js";
import { createCredentialCheck } from "../server/auth.js";
import { ensureStoreToken } from "../server/token-file.js";
import { listenHeld } from "../tree/held-listen.js";
import { sharePath } from "../tree/held-socket.js";
import type { Tree } from "../tree/types.js";

export interface HoldShareOptions {
  tree: Tree;
  byteseek: Byteseek;
  /** The store folder (absolute). */
  folder: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  holder: "mcp" | "run";
  /** The workspace the hello names (default the runtime's). */
  workspace?: string;
  /**
   * The MCP sessions' factory and change feed of a process that serves MCP itself (`byteseek mcp`):
   * relayed sessions share them; absent, the socket makes its own (and closes its feed).
   */
  mcp?: { factory: McpFactory; live: LiveTree };
  /**
   * Builds what answers HTTP on the socket (default: the server's app on this store, with the
   * store's token, no web page). Called at the first HTTP connection, and again at the next one
   * after a build that failed.
   */
  buildHttp?: (deps: HttpAppDeps) => Promise<HttpAnswerer>;
}

/** What the HTTP app on the socket is built from. */
export interface HttpAppDeps {
  tree: Tree;
  byteseek: Byteseek;
  logger: Logger;
  token: string;
}

/** What answers the socket's HTTP connections: a server to hand each one to. */
export interface HttpAnswerer {
  server: { emit(event: "connection", socket: Socket): boolean };
  close(): Promise<unknown>;
}

/** The HTTP API on the folder, as a server's (no web page), with the store's token. */
export async function buildHttpApp({
  tree,
  byteseek: bs,
  logger,
  token,
}: HttpAppDeps): Promise<HttpAnswerer> {
  const { buildApp } = await import("../server/app.js");
  const built = await buildApp({
    tree,
    logger: logger.child({ part: "http" }),
    runtime: bs.runtime,
    mcp: bs.mcp,
    web: false,
    token,
  });
  await built.ready();
  return built;
}

/**
 * A value made at its first use and kept — unless making it failed: then the failure is logged
 * once (however many connections waited on it) and the next use makes it again, so one bad moment
 * does not refuse every later connection for the rest of the run.
 */
export function madeOnUse<T>(make: () => Promise<T>, onFailure: (err: unknown) => void) {
  let made: Promise<T> | undefined;
  return {
    get(): Promise<T> {
      if (made) return made;
      const making = make();
      made = making;
      making.catch((err: unknown) => {
        if (made === making) made = undefined;
        onFailure(err);
      });
      return making;
    },
    /** What was made (or is being made), when anything was: to close it. */
    current: (): Promise<T> | undefined => made,
  };
}

/**
 * Serves the folder's socket until `close()`; a socket that cannot be made is a warning (listenHeld).
 * What answers on it is made at its first connection of each kind: the HTTP app (fastify and every
 * route) at the first HTTP request, the MCP sessions (the SDK's server, a watch of the tree) at the
 * first relay — a `byteseek run` that nobody reaches loads neither (~0.3 s of CPU at its start).
 * One that fails to be made is logged, its connections dropped, and made again at the next one.
 */
export async function holdShare(o: HoldShareOptions): Promise<{ path: string; close(): Promise<void> }> {
  const { tree, byteseek: bs, folder, env, logger } = o;
  const token = env.BYTESEEK_TOKEN || (await ensureStoreToken(folder)).token;
  const path = await sharePath(folder, env);
  const buildHttp = o.buildHttp ?? buildHttpApp;
  const app = madeOnUse(
    () => buildHttp({ tree, byteseek: bs, logger, token }),
    (err) =>
      logger.warn(
        { err, path },
        "the held store socket could not build its HTTP API: its connections are dropped until the next one builds it",
      ),
  );
  const relays = madeOnUse(mcpRelays, (err) =>
    logger.warn(
      { err, path },
      "the held store socket could not start serving relayed MCP sessions: the next relay tries again",
    ),
  );

  /** Relayed MCP sessions: the holder's own factory and feed (`byteseek mcp`), or ones made for the socket. */
  async function mcpRelays(): Promise<{ relays: Relays; live: LiveTree }> {
    const [{ createRelays }, { createLiveTree }, { createMcpFactory }, { runtimeSource }] = await Promise.all(
      [
        import("../mcp/share.js"),
        import("../mcp/live.js"),
        import("../mcp/server.js"),
        import("../mcp/source.js"),
      ],
    );
    const live = o.mcp?.live ?? createLiveTree(tree, logger);
    const factory =
      o.mcp?.factory ??
      createMcpFactory({
        source: runtimeSource(tree, bs.runtime, bs.search),
        logger,
        live,
        workspace: bs.runtime.workspace,
      });
    return { relays: createRelays({ factory, live, logger }), live };
  }

  const shared = await listenHeld({
    path,
    logger,
    workspace: o.workspace ?? bs.runtime.workspace,
    holder: o.holder,
    http: async (socket: Socket) => {
      let answerer: HttpAnswerer;
      try {
        answerer = await app.get();
      } catch {
        // logged once by madeOnUse; the next connection builds it again
        socket.destroy();
        return;
      }
      answerer.server.emit("connection", socket);
    },
    relay: async (socket: Socket) => {
      let made: { relays: Relays };
      try {
        made = await relays.get();
      } catch {
        socket.destroy();
        return { close: async () => {} };
      }
      return made.relays.relay(socket);
    },
    credential: createCredentialCheck(token).holds,
  });
  return {
    path,
    async close() {
      await shared?.close();
      const made = await relays.current()?.catch(() => undefined);
      made?.relays.close();
      if (made && o.mcp === undefined) made.live.close();
      await (await app.current()?.catch(() => undefined))?.close();
    },
  };
}
