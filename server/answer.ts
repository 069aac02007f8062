/**
 * What every answer carries and logs, whichever path answers it: fastify's hooks (server/app.ts)
 * and the fast path (server/fast-path.ts) both build their headers and their log line here, so the
 * two cannot drift apart; the SSE routes, which write their own head, take the same headers.
 */
import type { Tree } from "../tree/index.js";
import { loggedMs } from "./errors.js";
import { revisionHeaders } from "./http-headers.js";

/**
 * The per-request hooks fastify's path runs, by type and function name. The fast path does each
 * one's work itself (gate: it declines while closing or without the token; stamp: answerHeaders;
 * logRequest: requestLine). A hook added to fastify must be listed here and its work done on the
 * fast path too: test/server/fast-path.test.ts compares this list with the hooks fastify has.
 */
export const HOOKS_THE_FAST_PATH_DOES = {
  onRequest: ["gate"],
  onSend: ["stamp"],
  onResponse: ["logRequest"],
} as const;

/** The headers every answer carries: the tree's revisions, the request id, and on shutdown a close. */
export function answerHeaders(tree: Tree, requestId: string, closing: boolean): Record<string, string> {
  const headers = revisionHeaders(tree);
  headers["x-request-id"] = requestId;
  if (closing) headers.connection = "close";
  return headers;
}

/** The one log line per request: never bodies, headers or the query (it may hold values). */
export function requestLine(
  method: string | undefined,
  url: string,
  status: number,
  elapsedMs: number,
): { method: string | undefined; url: string; status: number; ms: number } {
  const q = url.indexOf("?");
  return { method, url: q < 0 ? url : url.slice(0, q), status, ms: loggedMs(elapsedMs) };
}
