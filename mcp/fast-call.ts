/**
 * The hot request of the stateless 2026-07-28 revision over HTTP — `tools/call` — answered without
 * an SDK instance. The SDK's stateless handler builds a server, a transport, a web Request and a
 * web Response for every request and validates the envelope with zod twice over; for a call that
 * costs more than the call. Here:
 *
 * - `plainToolCall` takes only a request the SDK would serve as it stands: a single JSON-RPC
 *   request, `tools/call` with a name and object arguments, the envelope (and nothing else) in
 *   `_meta` naming the supported revision, the standard headers present and equal to the body
 *   (MCP-Protocol-Version, Mcp-Method, Mcp-Name in plain form), an Accept naming both answer
 *   types, and the SDK's own classification agreeing. Anything else — another method, retry
 *   material (`inputResponses`, `requestState`), progress tokens, a header to decode, a malformed
 *   envelope — goes to the SDK, which serves it or answers its error.
 * - the call is the same function the SDK instance's handler runs (mcp/server.ts `callTool`);
 * - `encodeAnswer` writes the answer as the SDK's instance, 2026 codec and per-request transport
 *   do for `tools/call`: a complete result checked (and its keys ordered) by the spec's
 *   CallToolResult schema, `resultType` "complete" unless the result names one, the server's
 *   identity stamped into `_meta`, one JSON body (`{result, jsonrpc, id}`, or the error for a
 *   handler that threw). test/mcp/fast-call.test.ts pins this byte for byte against the SDK's answer.
 *
 * The same for a `tools/call` on a live 2025-era session answered with JSON bodies (its client
 * cannot be asked): `sessionToolCall` takes only a request the SDK's session transport and
 * instance would serve as they stand (a single request, `tools/call` with a name and object
 * arguments and nothing else, the session's negotiated MCP-Protocol-Version, an Accept naming both
 * answer types, a JSON Content-Type, the SDK's classification saying legacy); mcp/http.ts checks
 * the session. `encodeSessionAnswer` writes the answer as the 2025 codec does (the result checked
 * by the CallToolResult schema, content defaulted, nothing stamped). test/mcp/session-call.test.ts
 * pins it against the SDK's.
 */
import type { IncomingHttpHeaders } from "node:http";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type ClientCapabilities,
  classifyInboundRequest,
  type Implementation,
  isInputRequiredResult,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  specTypeSchemas,
} from "@modelcontextprotocol/server";
import type { ServerIdentity } from "./identity.js";

/** The revision served here (the SDK's only modern one). */
export const PLAIN_REVISION = "2026-07-28";

const ENVELOPE_KEYS = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
]);
const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS = new Set(["name", "arguments", "_meta"]);
/** A name sent as is in Mcp-Name (no encoded form to decode): tree and MCP names both fit. */
const PLAIN_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export interface PlainToolCall {
  id: string | number;
  name: string;
  args: Record<string, unknown>;
  clientInfo: Implementation | undefined;
  clientCaps: ClientCapabilities;
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => v !== null && typeof v === "object" && !Array.isArray(v);
const onlyKeys = (o: Plain, allowed: Set<string>) => Object.keys(o).every((k) => allowed.has(k));

/** The call a JSON-RPC message asks for, when it is a plain 2026-era `tools/call` (the message alone judged). */
function plainCallMessage(body: unknown): PlainToolCall | undefined {
  if (!isPlain(body)) return undefined;
  if (body.method !== "tools/call" || body.jsonrpc !== "2.0" || !onlyKeys(body, REQUEST_KEYS))
    return undefined;
  const { id, params } = body;
  if (!(typeof id === "string" || Number.isSafeInteger(id))) return undefined;
  if (!isPlain(params) || !onlyKeys(params, PARAMS_KEYS)) return undefined;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== "string" || !PLAIN_NAME.test(name)) return undefined;
  if (args !== undefined && !isPlain(args)) return undefined;
  if (!isPlain(meta) || !onlyKeys(meta, ENVELOPE_KEYS)) return undefined;
  if (meta[PROTOCOL_VERSION_META_KEY] !== PLAIN_REVISION) return undefined;
  const caps = meta[CLIENT_CAPABILITIES_META_KEY];
  const info = meta[CLIENT_INFO_META_KEY];
  if (!isPlain(caps)) return undefined;
  if (
    info !== undefined &&
    !(isPlain(info) && typeof info.name === "string" && typeof info.version === "string")
  )
    return undefined;
  return {
    id: id as string | number,
    name,
    args: (args ?? {}) as Plain,
    clientInfo: info as Implementation | undefined,
    clientCaps: caps as ClientCapabilities,
  };
}

/** The call `body` asks for, when it is a plain 2026-era `tools/call` the SDK would serve as is; otherwise undefined. */
export function plainToolCall(
  method: string,
  headers: IncomingHttpHeaders,
  body: unknown,
): PlainToolCall | undefined {
  if (method !== "POST") return undefined;
  const call = plainCallMessage(body);
  if (call === undefined) return undefined;
  const version = headers["mcp-protocol-version"];
  const mcpMethod = headers["mcp-method"];
  const mcpName = headers["mcp-name"];
  const accept = headers.accept ?? "";
  if (version !== PLAIN_REVISION || mcpMethod !== "tools/call" || mcpName !== call.name) return undefined;
  if (!isJsonContentType(headers["content-type"] ?? "")) return undefined;
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  // The SDK's own reading of the request must agree (envelope checks and all).
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: version,
    mcpMethodHeader: mcpMethod,
    mcpNameHeader: mcpName,
    body,
  });
  if (route.kind !== "modern" || route.messageKind !== "request") return undefined;
  return call;
}

/**
 * The call a message on a stdio connection pinned to the 2026-07-28 revision asks for, when it is
 * a plain `tools/call` (the same message rules as over HTTP; stdio has no headers, so the SDK's
 * reading is asked with the ones the message implies); otherwise undefined.
 */
export function stdioPlainCall(message: unknown): PlainToolCall | undefined {
  const call = plainCallMessage(message);
  if (call === undefined) return undefined;
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: PLAIN_REVISION,
    mcpMethodHeader: "tools/call",
    mcpNameHeader: call.name,
    body: message,
  });
  if (route.kind !== "modern" || route.messageKind !== "request") return undefined;
  return call;
}

/** A `tools/call` on a 2025-era session, as `sessionToolCall` takes it. */
export interface SessionToolCall {
  id: string | number;
  name: string;
  args: Record<string, unknown>;
}

const SESSION_PARAMS_KEYS = new Set(["name", "arguments"]);

/**
 * The call `body` asks for, when it is a plain `tools/call` that a 2025-era session which
 * negotiated `version` would serve as is; otherwise undefined (the session is the caller's to check).
 */
export function sessionToolCall(
  method: string,
  headers: IncomingHttpHeaders,
  body: unknown,
  version: string | undefined,
): SessionToolCall | undefined {
  if (method !== "POST" || version === undefined || !isPlain(body)) return undefined;
  if (body.method !== "tools/call" || body.jsonrpc !== "2.0" || !onlyKeys(body, REQUEST_KEYS))
    return undefined;
  const { id, params } = body;
  if (!(typeof id === "string" || Number.isSafeInteger(id))) return undefined;
  if (!isPlain(params) || !onlyKeys(params, SESSION_PARAMS_KEYS)) return undefined;
  const { name, arguments: args } = params;
  if (typeof name !== "string" || (args !== undefined && !isPlain(args))) return undefined;
  const protocolVersion = headers["mcp-protocol-version"];
  const accept = headers.accept ?? "";
  if (protocolVersion !== version) return undefined;
  if (!isJsonContentType(headers["content-type"] ?? "")) return undefined;
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  const mcpMethod = headers["mcp-method"];
  const mcpName = headers["mcp-name"];
  // The SDK's own reading must agree, with every header it reads.
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: protocolVersion,
    ...(typeof mcpMethod === "string" ? { mcpMethodHeader: mcpMethod } : {}),
    ...(typeof mcpName === "string" ? { mcpNameHeader: mcpName } : {}),
    body,
  });
  if (route.kind !== "legacy") return undefined;
  return { id: id as string | number, name, args: (args ?? {}) as Plain };
}

const CALL_RESULT = specTypeSchemas.CallToolResult["~standard"];

/** A handler's result as the SDK's instance passes it on: input-required as is, a complete one through the spec's schema. */
function checkedResult(result: unknown): Plain {
  if (isInputRequiredResult(result)) return result as unknown as Plain;
  const checked = CALL_RESULT.validate(result);
  if (checked instanceof Promise) throw new Error("the CallToolResult schema validates synchronously");
  if (checked.issues !== undefined)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Invalid tools/call result: ${checked.issues.map((i) => i.message).join("; ")}`,
    );
  return checked.value as Plain;
}

/** The JSON body answering `id` with the error a handler threw, as both eras' codecs write it. */
function encodeError(id: string | number, error: unknown): string {
  const err = (isPlain(error) ? error : {}) as { code?: unknown; message?: unknown; data?: unknown };
  const thrown = Number.isSafeInteger(err.code) ? (err.code as number) : ProtocolErrorCode.InternalError;
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    error: {
      // Both codecs answer a missing resource as invalid params.
      code: thrown === -32002 ? -32602 : thrown,
      message: err.message ?? "Internal error",
      ...(err.data === undefined ? {} : { data: err.data }),
    },
  });
}

/** The JSON body answering `id` with `result` (or with the error a handler threw), as the SDK writes it. */
export function encodeAnswer(
  id: string | number,
  outcome: { result: unknown } | { error: unknown },
  identity: ServerIdentity,
): string {
  if ("error" in outcome) return encodeError(id, outcome.error);
  let result: Plain;
  try {
    result = checkedResult(outcome.result);
  } catch (err) {
    return encodeAnswer(id, { error: err }, identity);
  }
  const encoded: Plain =
    result.resultType === undefined ? { ...result, resultType: "complete" } : { ...result };
  const meta = encoded._meta;
  if (meta === undefined) encoded._meta = { [SERVER_INFO_META_KEY]: identity };
  else if (isPlain(meta) && meta[SERVER_INFO_META_KEY] === undefined)
    encoded._meta = { ...meta, [SERVER_INFO_META_KEY]: identity };
  return JSON.stringify({ result: encoded, jsonrpc: "2.0", id });
}

/** Keys of other result families: a result holding one gets no default `content` (the SDK's rule). */
const FOREIGN_RESULT_KEYS = ["task", "inputRequests", "requestState"];

/** The JSON body answering `id` on a 2025-era session, as the SDK's instance and 2025 codec write it. */
export function encodeSessionAnswer(
  id: string | number,
  outcome: { result: unknown } | { error: unknown },
): string {
  if ("error" in outcome) return encodeError(id, outcome.error);
  let result: unknown = outcome.result;
  // Unreachable for a client that cannot be asked (approval.ts denies instead of asking); the SDK
  // would ask through elicitation, which a JSON-answered session has no stream for.
  if (isInputRequiredResult(result))
    return encodeError(
      id,
      new ProtocolError(ProtocolErrorCode.InternalError, "this session's client cannot be asked for input"),
    );
  const plain = isPlain(result) ? result : undefined;
  if (plain && plain.content === undefined && !FOREIGN_RESULT_KEYS.some((k) => k in plain))
    result = { ...plain, content: [] };
  try {
    result = checkedResult(result);
  } catch (err) {
    return encodeError(id, err);
  }
  return JSON.stringify({ result, jsonrpc: "2.0", id });
}
