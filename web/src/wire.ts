/**
 * The server's wire shapes, as types: declared once with zod in tree/http/schemas.ts (the tree)
 * and server/runtime-schemas.ts (tools, prompt, approvals, MCP, agent turns), with the agent's
 * events in agent/events.ts and its runs in agent/run-schemas.ts. None of them depends on anything Node-only; they are imported here
 * as types only, so nothing of them reaches the page.
 */

export type { ModelChoices as ModelChoicesJson } from "../../agent/model-schemas.js";
export type { ReplayJson, RunDetail, RunStatus, RunSummary, RunsListing } from "../../agent/run-schemas.js";
export type { OverviewJson } from "../../server/overview-schemas.js";
export type {
  AgentToolAcceptJson,
  ApprovalJson,
  InvalidToolJson,
  McpAcceptJson,
  McpReviewJson,
  McpServerJson,
  McpServersJson,
  McpSyncJson,
  PendingApprovalsJson,
  PromptJson,
  RunDiffJson,
  ToolCallsJson,
  ToolJson,
  ToolResultJson,
  ToolsJson,
  TurnJson,
  TurnStreamEvent,
} from "../../server/runtime-schemas.js";
export type {
  ChildJson,
  HistoryJson,
  HistoryListJson,
  ListJson,
  NodeJson,
  WatchBatchJson,
  WatchEventJson,
  WatchProgressJson,
  WriteJson,
} from "../../tree/http/schemas.js";
