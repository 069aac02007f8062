/**
 * What a caller is told while a call runs: its progress, and that it waits for a person. Types
 * only, importing none but types, so the web page's tsconfig reaches them through agent/events.ts,
 * whose `tool_progress` and `approval_pending` events carry them.
 */
import type { ElicitationAsked } from "../gate/asks.js";
import type { Effect } from "./effect-types.js";

/** What a running call says of itself: a progress step, or a log line of its upstream. */
export interface ToolProgress {
  kind: "progress" | "log";
  /** Neutralised and cut short; for a log, the upstream's data as text. */
  message: string;
  progress?: number;
  total?: number;
  /** A log message's level (`info`, `warning`, `error`…). */
  level?: string;
  /** Set on the last one told: the upstream said more, which is not shown. */
  more?: boolean;
}

/** What a caller hears when a call starts waiting for a person. */
export interface PendingApproval {
  key: string;
  tool: string;
  args: unknown;
  reason: string;
  /** For a change to what a person wrote: its diff, and the key it changes. */
  diff?: string;
  change?: { key: string; action: "set" | "del" };
  /** What the call will do (effect.ts). */
  effect?: Effect;
  /** Who wrote the declaration: `person`, or `run <vid>`. */
  owner?: string;
  /** The hash of the declaration as read for this call. */
  hash?: string;
  /** For a declaration changed since a person approved it for good: the diff against that version. */
  declDiff?: string;
  /** For a question an upstream MCP server asks during the call: what it asks, and the form's schema. */
  elicitation?: ElicitationAsked;
}
