/**
 * What a process holding a store folder serves beside it on the share socket (the store layer's,
 * tree/held-socket.ts and tree/held-listen.ts): the HTTP API for `kvspace` (and `byteseek run|chat`)
 * on the folder, and MCP sessions relayed by other `byteseek mcp` processes (mcp/share.ts) — with the
 * store's token: one module for every holder (`byteseek mcp`, an embedded `byteseek run|chat`;
 * `byteseek serve` serves the same socket from its routes). An embedded `byteseek run` or `chat` holds its
 * folder for the whole turn, so it serves the socket too: the `kvspace approve …` line it prints
 * reaches it, as it would reach a server or a `byteseek mcp`.
 */
import type { Logger } from "pino";
import type { Byteseek } from "../compose/byteseek.js";
import { createLiveTree, type LiveTree } from "../mcp/live.js";
import { createMcpFactory, type McpFactory } from "../mcp/server.js";
import { listenShared } from "../mcp/share.js";
import { runtimeSource } from "../mcp/source.js";
import { buildApp } from "../server/app.js";
import { createCredentialCheck } from "../server/auth.js";
import { ensureStoreToken } from "../server/token-file.js";
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
}

/** Serves the folder's socket until `close()`; a socket that cannot be made is a warning (listenShared). */
export async function holdShare(o: HoldShareOptions): Promise<{ path: string; close(): Promise<void> }> {
  const { tree, byteseek: bs, folder, env, logger } = o;
  const token = env.BYTESEEK_TOKEN || (await ensureStoreToken(folder)).token;
  const app = await buildApp({
    tree,
    logger: logger.child({ part: "http" }),
    runtime: bs.runtime,
    mcp: bs.mcp,
    web: false,
    token,
  });
  await app.ready();
  const live = o.mcp?.live ?? createLiveTree(tree, logger);
  const factory =
    o.mcp?.factory ??
    createMcpFactory({
      source: runtimeSource(tree, bs.runtime, bs.search),
      logger,
      live,
      workspace: bs.runtime.workspace,
    });
  const path = await sharePath(folder, env);
  const shared = await listenShared({
    path,
    factory,
    live,
    logger,
    workspace: o.workspace ?? bs.runtime.workspace,
    holder: o.holder,
    http: (socket) => app.server.emit("connection", socket),
    credential: createCredentialCheck(token).holds,
  });
  return {
    path,
    async close() {
      await shared?.close();
      if (o.mcp === undefined) live.close();
      await app.close();
    },
  };
}
