/**
 * The tools' error catalogue. Tool code throws a `ToolError`; the call boundary turns it into a
 * result whose `kind` comes from the error and whose `details.code` is the code.
 */
import { CodedError } from "../tree/errors.js";

export type ToolKind = "ok" | "truncated" | "vet" | "arg" | "denied" | "runtime";

export type ToolErrorCode =
  // resolve / validate / gate
  | "unknown_tool"
  | "disabled_tool"
  | "invalid_declaration"
  | "invalid_args"
  | "denied"
  | "needs_approval"
  | "timeout"
  | "aborted"
  | "failed"
  // the edit family (issue: edit tools)
  | "not_found"
  | "ambiguous"
  | "overlap"
  | "no_change"
  | "empty_old"
  | "file_not_found"
  | "is_directory"
  | "not_regular_file"
  | "path_changed"
  | "file_changed"
  | "not_a_directory"
  | "outside_root"
  | "invalid_path"
  | "permission_denied"
  | "binary"
  | "encoding"
  | "offset_out_of_range"
  | "invalid_pattern"
  | "already_exists"
  | "exit_code"
  | "killed"
  // the runtime's impl kinds and the tree tools
  | "read_only"
  | "version_mismatch"
  | "http_status"
  | "no_model"
  // the mcp impl kind (tools/mcp/)
  | "mcp_error"
  | "mcp_unavailable"
  | "mcp_protocol"
  /** the upstream tool is outside its entry's allow-list, or was never synced (tools/mcp/allowed.ts) */
  | "mcp_not_allowed"
  /** An upstream MCP tool changed (or came back, or is new) since a person accepted it (tools/mcp/pins.ts), or another run's tool no person accepted (tools/catalogue/agent-tools.ts). */
  | "held_for_review"
  /** A run's declaration beyond the policy's agentTools.maxPerRun / maxBytesPerRun (tools/catalogue/agent-tools.ts). */
  | "catalogue_full"
  /** An HTTP upstream wants a person to sign in (again): kvspace mcp login (tools/mcp/oauth/). */
  | "mcp_sign_in"
  // the sandbox every command runs in (tools/sandbox/)
  | "sandbox_unavailable"
  // durable runs (tools/call/intent.ts, agent/resume.ts)
  /** a record whose call began and has no result yet (its process may have died during it) */
  | "started"
  /** a resumed run's call that began before its process died and cannot be run again safely */
  | "outcome_unknown";

/** The kind a code maps to when the thrower does not say. */
const DEFAULT_KIND: Partial<Record<ToolErrorCode, ToolKind>> = {
  unknown_tool: "vet",
  disabled_tool: "vet",
  invalid_declaration: "vet",
  invalid_args: "arg",
  denied: "denied",
  needs_approval: "denied",
  outside_root: "denied",
  read_only: "denied",
  mcp_not_allowed: "denied",
  held_for_review: "denied",
  catalogue_full: "denied",
  sandbox_unavailable: "denied",
};

export class ToolError extends Error {
  override readonly name = "ToolError";
  readonly code: ToolErrorCode;
  readonly kind: ToolKind;
  /** Facts for `details` of the result (line numbers, candidates…), JSON-serialisable. */
  readonly details: Record<string, unknown>;
  /**
   * The message as the boundary can write it once it knows where the call ran and what its run is
   * offered: a "does not exist" naming the workspace, suggesting only tools the model can call.
   */
  readonly explain: ((where: CallWhere) => string) | undefined;

  constructor(
    code: ToolErrorCode,
    message: string,
    options: {
      kind?: ToolKind;
      details?: Record<string, unknown>;
      cause?: unknown;
      explain?: (where: CallWhere) => string;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.kind = options.kind ?? DEFAULT_KIND[code] ?? "runtime";
    this.details = options.details ?? {};
    this.explain = options.explain;
  }
}

/** What a message written by `ToolError.explain` may say: the workspace, and which tools the run is offered. */
export interface CallWhere {
  /** The workspace's real path. */
  workspace: string;
  /** Whether the run's model is offered this tool (enabled, listed with a snippet, not blocked for the run). */
  offers(name: string): boolean;
}

/**
 * `Check the path with edit.ls or edit.glob.` with only the tools the run is offered (none: "").
 * `sentence` holds `{tools}` where the names go.
 */
export function suggest(where: CallWhere, tools: readonly string[], sentence: string): string {
  const offered = tools.filter((t) => where.offers(t));
  if (offered.length === 0) return "";
  const names = offered.length === 1 ? offered[0] : `${offered.slice(0, -1).join(", ")} or ${offered.at(-1)}`;
  return ` ${sentence.replace("{tools}", names as string)}`;
}

export function isToolError(err: unknown): err is ToolError {
  return err instanceof ToolError;
}

/** Codes of the approvals API (tools/gate/approvals.ts), for its callers: HTTP maps them to statuses. */
export type ApprovalErrorCode = "APPROVAL_NOT_FOUND" | "APPROVAL_DECIDED" | "APPROVAL_INVALID";

/** A decision that cannot be made: no such approval, already decided, or malformed. */
export class ApprovalError extends CodedError<ApprovalErrorCode> {
  override readonly name = "ApprovalError";
}

export function isApprovalError(err: unknown): err is ApprovalError {
  return err instanceof ApprovalError;
}

/** Codes of accepting a run's tool for every run (tools/catalogue/agent-tools.ts), for its callers: HTTP maps them. */
export type AgentToolErrorCode = "AGENT_TOOL_NOT_FOUND" | "AGENT_TOOL_NOT_AGENTS" | "AGENT_TOOL_STALE";

/** An acceptance that cannot be made: no such tool, not a run's, or it changed since it was reviewed. */
export class AgentToolError extends CodedError<AgentToolErrorCode> {
  override readonly name = "AgentToolError";
}

export function isAgentToolError(err: unknown): err is AgentToolError {
  return err instanceof AgentToolError;
}

/** Codes of the MCP review API (tools/mcp/client.ts review/accept), for its callers: HTTP maps them. */
export type McpReviewErrorCode = "MCP_UNKNOWN_SERVER" | "MCP_NOT_HELD" | "MCP_REVIEW_STALE";

/** A review or acceptance that cannot be made: no such server, nothing held of that name, or it changed again. */
export class McpReviewError extends CodedError<McpReviewErrorCode> {
  override readonly name = "McpReviewError";
}

export function isMcpReviewError(err: unknown): err is McpReviewError {
  return err instanceof McpReviewError;
}

/** Codes of reading byteseek's own documents (tools/doc/): HTTP maps them to statuses. */
export type DocErrorCode = "DOC_MALFORMED";

/**
 * A document at one of byteseek's own keys (shared/keys.ts) that does not match its schema:
 * written by hand, by an older byteseek, or damaged. Details: `key`, `problems` (one line each).
 */
export class DocError extends CodedError<DocErrorCode> {
  override readonly name = "DocError";
}

export function isDocError(err: unknown): err is DocError {
  return err instanceof DocError;
}
