/**
 * What a turn reports while it runs and how it ends: the one definition the loop emits, the
 * server streams (`POST /v1/agent/turn` with `Accept: text/event-stream`), the CLI prints and the
 * web page draws. Types (and the list of stop reasons) only; it imports nothing Node-only, so the page's tsconfig reaches it.
 */

import type { PendingApproval, ToolProgress } from "../tools/call/call-notices.js";
import type { ToolKind } from "../tools/errors.js";
import type { StreamEvent } from "./providers/types.js";

/** Why a turn ended. */
export const STOP_REASONS = [
  "done",
  "terminated",
  "max_steps",
  "repair_exhausted",
  "aborted",
  "model_error",
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** What a turn reports while it runs, for streaming to a terminal or an HTTP client. */
export type AgentEvent =
  | { type: "turn_start"; vid: string }
  | { type: "step"; step: number }
  | Exclude<StreamEvent, { type: "done" }>
  | { type: "tool_start"; id: string; name: string; args: unknown }
  /** A running call's progress or its upstream's log line (bounded per call: tools/mcp/upstream-requests.ts). */
  | ({ type: "tool_progress"; id: string; name: string } & ToolProgress)
  /**
   * The call waits for a person to decide the approval at `key` (`kvspace approve|deny <vid>/<n>`):
   * what the pipeline tells its caller (tools/call/call-notices.ts), the tool named `name`.
   */
  | ({ type: "approval_pending"; id: string; name: string } & Omit<PendingApproval, "tool">)
  | {
      type: "tool_result";
      id: string;
      name: string;
      kind: ToolKind;
      isError: boolean;
      text: string;
      record?: string;
    }
  | { type: "turn_end"; result: TurnResult };

export interface TurnCall {
  name: string;
  kind: ToolKind;
  isError: boolean;
  record?: string;
}

export interface TurnResult {
  vid: string;
  /** The model's final text (or, when it stopped otherwise, why). */
  text: string;
  reason: StopReason;
  steps: number;
  calls: TurnCall[];
  /** Record keys made during the turn. */
  records: string[];
  usage: { inputTokens: number; outputTokens: number };
  /** Set when reason is model_error: the error's code. */
  error?: { code: string; message: string };
  /** A resumed run: what became of each call its process left unanswered (agent/resume.ts). */
  resumed?: ResumedCall[];
}

/**
 * `not_started` (no record: it ran now), `recorded` (its recorded result fed back), `rerun` (a read,
 * or an edit or tree write whose files or keys were as before: run again), `resent` (http, same
 * idempotency key), `applied` (an edit or tree write found done by its file hashes or key values),
 * `file_changed`, `key_changed`, `unknown` (not run again: the model is told the outcome is unknown),
 * and under the policy's `resumeUnknown: "ask"` `approved` (a person let it run again: it ran) or
 * `declined` (a person did not: not run again, reported unknown).
 */
export interface ResumedCall {
  id: string;
  name: string;
  decision: ResumeDecision;
  /** The approval entry a person was asked for it (running it again, or the tool's confirmation). */
  approval?: string;
}

export const RESUME_DECISIONS = [
  "not_started",
  "recorded",
  "rerun",
  "resent",
  "applied",
  "file_changed",
  "key_changed",
  "unknown",
  "approved",
  "declined",
] as const;
export type ResumeDecision = (typeof RESUME_DECISIONS)[number];
