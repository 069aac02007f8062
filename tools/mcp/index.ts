export { createMcpClient, type McpClient, type McpClientOptions, type McpServerStatus } from "./client.js";
export {
  MCP_DIR,
  McpServerEntry,
  mapToolNames,
  parseEntry,
  ServerName,
  SYNC_DIR,
  syncKey,
} from "./registry.js";
export { mapResult } from "./result.js";
export type { SyncReason, SyncReport, SyncState } from "./sync.js";
export type { UpstreamState, UpstreamStatus } from "./upstream.js";
