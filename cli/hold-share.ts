/**
 * What a process holding a store folder serves beside it on the share socket (mcp/share.ts): the
 * HTTP API for `kvspace` (and `byteseek run|chat`) on the folder, and MCP sessions relayed by other
 * `byteseek mcp` processes — with the store's token. An embedded `byteseek run` or `chat` holds its
 * folder for the whole turn, so it serves the socket too: the `kvspace approve …` line it prints
 * reaches it, as it would reach a server or a `byteseek mcp`.
 */
import type { Logger } from "pino";
import type { Byteseek } from "../compose/byteseek.js";
import { createLiveTree } from "../mcp/live.js";
import { createMcpFactory } from "../mcp/server.js";
import { listenShared, sharePath } from "../mcp/share.js";
import { runtimeSource } from "../mcp/source.js";
import { buildApp } from "../server/app.js";
import { createCredentialCheck } from "../server/auth.js";
import { ensureStoreToken } from "../server/token-file.js";
import type { Tree } from "../tree/types.js";

export interface HoldShareOptions {
  tree: Tree;
  byteseek: Byteseek;
  /** The store folder (absolute). */
  folder: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  holder: "mcp" | "run";
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
  const live = createLiveTree(tree, logger);
  const factory = createMcpFactory({
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
    workspace: bs.runtime.workspace,
    holder: o.holder,
    http: (socket) => app.server.emit("connection", socket),
    credential: createCredentialCheck(token).holds,
  });
  return {
    path,
    async close() {
      await shared?.close();
      live.close();
      await app.close();
    },
  };
}
