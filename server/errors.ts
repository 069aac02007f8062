/**
 * The HTTP layer's error catalogue and the one place that maps every error code — the tree's and
 * the server's own — to an HTTP status and the `{"error": {"code", "message", ...details}}` body.
 */
import type { FastifyError } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import type { LogFn } from "pino";
import { type AgentErrorCode, isAgentError } from "../agent/errors.js";
import {
  type AgentToolErrorCode,
  type ApprovalErrorCode,
  type DocErrorCode,
  isAgentToolError,
  isApprovalError,
  isDocError,
  isMcpReviewError,
  type McpReviewErrorCode,
} from "../tools/errors.js";
import { isTreeError, type TreeErrorCode } from "../tree/errors.js";
import { nodeToJson } from "../tree/http/index.js";
import { valueToJson } from "../tree/value.js";
import { ServerError, type ServerErrorCode } from "./server-error.js";

export { ServerError, type ServerErrorCode } from "./server-error.js";

export type ErrorCode =
  | ServerErrorCode
  | TreeErrorCode
  | AgentErrorCode
  | ApprovalErrorCode
  | McpReviewErrorCode
  | AgentToolErrorCode
  | DocErrorCode;

/** Code → HTTP status: the only such table. */
export const STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  TREE_INVALID_KEY: 400,
  TREE_INVALID_VALUE: 400,
  TREE_VALUE_TOO_LARGE: 413,
  TREE_NOT_FOUND: 404,
  TREE_NOT_A_DIRECTORY: 409,
  TREE_NOT_EMPTY: 409,
  TREE_READ_ONLY: 409,
  TREE_VERSION_MISMATCH: 412,
  TREE_EXISTS: 412,
  TREE_TXN_INVALID: 400,
  TREE_COMPACTED: 410,
  TREE_IMPORT_FAILED: 400,
  TREE_LOCKED: 503,
  TREE_CLOSED: 503,
  TREE_UNAVAILABLE: 503,
  // raised by the HTTP client only (a server it reaches did not answer): the gateway's timeout
  TREE_TIMEOUT: 504,
  TREE_INVALID_OPTION: 500,
  TREE_HIDDEN: 403,
  TREE_TOO_LARGE: 413,
  // answered under its HTTP name (ANSWERED_AS): this entry is for the type only
  TREE_INEXACT_NUMBER: 400,
  HTTP_BAD_REQUEST: 400,
  HTTP_INVALID_JSON: 400,
  HTTP_INVALID_HEADER: 400,
  HTTP_UNAUTHORIZED: 401,
  HTTP_MISDIRECTED: 421,
  HTTP_FORBIDDEN_ORIGIN: 403,
  HTTP_INEXACT_NUMBER: 400,
  HTTP_JSON_TOO_DEEP: 400,
  HTTP_TOO_MANY_WATCHES: 503,
  HTTP_NOT_FOUND: 404,
  HTTP_METHOD_NOT_ALLOWED: 405,
  HTTP_BODY_TOO_LARGE: 413,
  HTTP_HEADERS_TOO_LARGE: 431,
  HTTP_REQUEST_TIMEOUT: 408,
  HTTP_UNSUPPORTED_MEDIA_TYPE: 415,
  HTTP_NOT_IMPLEMENTED: 501,
  HTTP_SHUTTING_DOWN: 503,
  HTTP_INTERNAL: 500,
  SERVER_CONFIG: 500,
  // The model provider: our setup or the provider is at fault, never the client.
  LLM_NOT_CONFIGURED: 503,
  LLM_BAD_CONFIG: 503,
  // ...except a model URL the client named and the server does not allow
  LLM_CLIENT_REFUSED: 403,
  LLM_RATE_LIMITED: 503,
  LLM_TIMEOUT: 504,
  LLM_HTTP: 502,
  LLM_NETWORK: 502,
  LLM_STREAM_CUT: 502,
  LLM_BAD_RESPONSE: 502,
  LLM_ABORTED: 499,
  AGENT_INVALID_VID: 400,
  AGENT_BAD_SETTING: 500,
  AGENT_RUN_BUSY: 409,
  AGENT_NOT_INTERRUPTED: 409,
  AGENT_RUN_NOT_FOUND: 404,
  AGENT_RUN_NOT_FINISHED: 409,
  APPROVAL_INVALID: 400,
  APPROVAL_NOT_FOUND: 404,
  APPROVAL_DECIDED: 409,
  MCP_UNKNOWN_SERVER: 404,
  MCP_NOT_HELD: 409,
  MCP_REVIEW_STALE: 409,
  AGENT_TOOL_NOT_FOUND: 404,
  AGENT_TOOL_NOT_AGENTS: 409,
  AGENT_TOOL_STALE: 409,
  // a stored document that does not match its schema: the tree's state, not the request, is wrong
  DOC_MALFORMED: 409,
};

/** The body every error answers with. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; [detail: string]: unknown };
}

export interface MappedError {
  status: number;
  body: ErrorBody;
  /** False for a bug (a 500): log it with its stack. */
  expected: boolean;
}

/** Fastify's own error codes for bad input, and what they become. */
const FASTIFY_CODES: Record<string, ServerErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "HTTP_INVALID_JSON",
  FST_ERR_CTP_EMPTY_JSON_BODY: "HTTP_INVALID_JSON",
  FST_ERR_CTP_BODY_TOO_LARGE: "HTTP_BODY_TOO_LARGE",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "HTTP_UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "HTTP_BAD_REQUEST",
  FST_ERR_CTP_EMPTY_TYPE: "HTTP_UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_CTP_INVALID_TYPE: "HTTP_UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_BAD_URL: "HTTP_BAD_REQUEST",
  FST_ERR_ASYNC_CONSTRAINT: "HTTP_BAD_REQUEST",
  FST_ERR_VALIDATION: "HTTP_BAD_REQUEST",
};

/** Logs a failed request (on its request's logger): an unexpected error whole, an expected 5xx as a warning. */
export function logFailure(log: { error: LogFn; warn: LogFn }, err: unknown, mapped: MappedError): void {
  if (!mapped.expected) log.error({ err }, "request failed");
  else if (mapped.status >= 500) log.warn({ code: mapped.body.error.code }, mapped.body.error.message);
}

/** A request's duration as its log line gives it: milliseconds to the microsecond (`0.727`, not `0.72695500000009`). */
export function loggedMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/**
 * Tree codes answered under the HTTP layer's name. A number the tree cannot keep exactly was refused
 * by the server as HTTP_INEXACT_NUMBER before the tree's value exactness (tree/exact.ts) raised its
 * own code, and clients read that code: the wire keeps it.
 */
const ANSWERED_AS: Partial<Record<TreeErrorCode, ServerErrorCode>> = {
  TREE_INEXACT_NUMBER: "HTTP_INEXACT_NUMBER",
};

/** Maps anything thrown by a route, a hook or fastify itself to a status and an error body. */
export function mapError(err: unknown): MappedError {
  if (isTreeError(err)) return made(ANSWERED_AS[err.code] ?? err.code, err.message, jsonDetails(err.details));
  if (err instanceof ServerError) return made(err.code, err.message, err.details);
  if (isAgentError(err)) return made(err.code, err.message, err.details);
  if (isApprovalError(err)) return made(err.code, err.message, err.details);
  if (isMcpReviewError(err)) return made(err.code, err.message, err.details);
  if (isAgentToolError(err)) return made(err.code, err.message, err.details);
  if (isDocError(err)) return made(err.code, err.message, err.details);
  if (hasZodFastifySchemaValidationErrors(err)) {
    const issues = err.validation.map((v) => ({
      path: v.instancePath || "/",
      message: v.message ?? "invalid",
    }));
    const where = (err as { validationContext?: string }).validationContext ?? "request";
    const first = issues[0];
    return made("HTTP_BAD_REQUEST", `invalid ${where}${first ? `: ${first.path} ${first.message}` : ""}`, {
      issues,
    });
  }
  const fe = err as Partial<FastifyError> | null;
  if (fe && typeof fe === "object" && typeof fe.code === "string") {
    const code = FASTIFY_CODES[fe.code];
    if (code) return made(code, fe.message ?? code);
    // Any other fastify error that carries a 4xx status is the client's, never a 500.
    if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500)
      return {
        status: fe.statusCode,
        body: body("HTTP_BAD_REQUEST", fe.message ?? "bad request"),
        expected: true,
      };
  }
  if (fe && typeof fe === "object" && (fe as { type?: string }).type === "entity.too.large")
    return made("HTTP_BODY_TOO_LARGE", "request body too large");
  return { status: 500, body: body("HTTP_INTERNAL", "internal error; see the server log"), expected: false };
}

/**
 * A request Node's HTTP parser refused before any route or hook could see it (the `clientError`
 * event): raw non-ASCII bytes or spaces in the URL, a malformed header, headers over the size limit,
 * a client too slow to send its request.
 */
export function mapClientError(err: { code?: unknown; reason?: unknown }): MappedError {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT")
    return made("HTTP_REQUEST_TIMEOUT", "the request did not arrive in time");
  if (err.code === "HPE_HEADER_OVERFLOW")
    return made("HTTP_HEADERS_TOO_LARGE", "the request headers are over the server's size limit");
  const reason = typeof err.reason === "string" && err.reason !== "" ? `: ${err.reason}` : "";
  return made(
    "HTTP_BAD_REQUEST",
    `the request is not valid HTTP/1.1${reason} (a URL must be ASCII: percent-encode each byte of anything else, e.g. é as %C3%A9)`,
  );
}

function made(code: ErrorCode, message: string, details: Record<string, unknown> = {}): MappedError {
  return { status: STATUS_OF[code], body: body(code, message, details), expected: true };
}

function body(code: ErrorCode, message: string, details: Record<string, unknown> = {}): ErrorBody {
  return { error: { ...details, code, message } };
}

/** Tree error details may hold nodes and values (with bigints): give them their JSON form. */
function jsonDetails(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) {
    if (v === undefined) continue;
    if (k === "current" && v && typeof v === "object" && "kind" in v)
      out[k] = nodeToJson(v as Parameters<typeof nodeToJson>[0]);
    else if (typeof v === "bigint") out[k] = v.toString();
    else if (v && typeof v === "object" && "kind" in v && "value" in v)
      out[k] = valueToJson(v as Parameters<typeof valueToJson>[0]);
    else out[k] = v;
  }
  return out;
}
