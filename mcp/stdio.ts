/**
 * MCP over stdio (`byteseek mcp`): the SDK's `serveStdio` answers both eras on one connection
 * (2025 initialize, or 2026-07-28 discovery), an instance from the factory serving it; tree changes
 * reach it as notifications (2025) or on its listen stream (2026).
 */
import { type StdioServerHandle, serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Logger } from "pino";
import type { LiveTree } from "./live.js";
import { notifyInstances } from "./notify.js";
import type { McpFactory } from "./server.js";

export interface StdioOptions {
  factory: McpFactory;
  live: LiveTree;
  logger: Logger;
  /** The run every call belongs to; absent: `mcp-<client name>`. */
  vid?: string;
}

export interface StdioMcp {
  close(): Promise<void>;
}

export function serveMcpStdio(options: StdioOptions): StdioMcp {
  const { factory, live, logger, vid } = options;
  const handle: StdioServerHandle = serveStdio(
    (ctx) => factory.create({ era: ctx.era, ...(vid === undefined ? {} : { vid }) }).server,
    { onerror: (err) => logger.debug({ err }, "MCP stdio error") },
  );
  const unsubscribe = live.subscribe((change) => notifyInstances(factory.instances, change));
  return {
    async close() {
      unsubscribe();
      await handle.close();
    },
  };
}
