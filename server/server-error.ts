/**
 * The HTTP layer's own codes and error class: apart from the catalogue's mapping (server/errors.ts,
 * which re-exports them), so the store's token file and the credential check (used by the CLI)
 * throw them without loading what the mapping needs (fastify's zod provider, the tree's JSON).
 */
import { CodedError } from "../tree/errors.js";

export type ServerErrorCode =
  | "HTTP_BAD_REQUEST"
  | "HTTP_INVALID_JSON"
  | "HTTP_INVALID_HEADER"
  | "HTTP_UNAUTHORIZED"
  /** The Host header names another server (a DNS-rebinding page, a misrouted request). */
  | "HTTP_MISDIRECTED"
  /** The Origin header names another site. */
  | "HTTP_FORBIDDEN_ORIGIN"
  /** A JSON number the server cannot keep exactly (an integer beyond int64, or beyond 2^53 in json). */
  | "HTTP_INEXACT_NUMBER"
  /** JSON nested deeper than the server reads. */
  | "HTTP_JSON_TOO_DEEP"
  /** More watches open than the server allows (BYTESEEK_MAX_WATCHES). */
  | "HTTP_TOO_MANY_WATCHES"
  | "HTTP_NOT_FOUND"
  | "HTTP_METHOD_NOT_ALLOWED"
  | "HTTP_BODY_TOO_LARGE"
  | "HTTP_HEADERS_TOO_LARGE"
  | "HTTP_REQUEST_TIMEOUT"
  | "HTTP_UNSUPPORTED_MEDIA_TYPE"
  | "HTTP_NOT_IMPLEMENTED"
  | "HTTP_SHUTTING_DOWN"
  | "HTTP_INTERNAL"
  /** The server's configuration (environment) is wrong; raised before listening, never over HTTP. */
  | "SERVER_CONFIG";

/** An error raised by the HTTP layer itself (not by the tree). */
export class ServerError extends CodedError<ServerErrorCode> {
  override readonly name = "ServerError";
}
