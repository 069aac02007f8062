export {
  annotationsOf,
  buildCatalogue,
  CALL_TOOL_DEF,
  FIND_TOOL_DEF,
  type McpCatalogue,
} from "./catalogue.js";
export { createMcpHttp, type McpHttp, type McpHttpOptions } from "./http.js";
export { createLiveTree, type LiveTree, type TreeChange } from "./live.js";
export { CALL_TOOL, FIND_TOOL, MCP_TOOL_NAME, mapNames, toMcpName } from "./names.js";
export { keyToUri, URI_PREFIX, uriToKey } from "./resources.js";
export {
  clientVid,
  createMcpFactory,
  HOST_TEXT_LIMIT,
  type McpFactory,
  type McpFactoryDeps,
  VID,
} from "./server.js";
export { type McpSource, runtimeSource, type SourceCallOptions, type ToolInfo, toolInfo } from "./source.js";
export { type StdioMcp, serveMcpStdio } from "./stdio.js";
