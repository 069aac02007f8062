import { type Dispatcher, request } from "undici";
import type { z } from "zod";
import { IMPL_OUTPUT_BYTES } from "../call/cap.js";
import type { HttpImpl } from "../catalogue/declaration.js";
import { ToolError } from "../errors.js";
import { type HostLookup, resolveTarget, targetOfUrl } from "../net/host-rules.js";
import type { KeptConnections } from "../net/kept-connections.js";
import { systemLookup } from "../net/lookup.js";
import { openPinned, type PinnedConnection } from "../net/pinned-connection.js";
import type { ToolContext, ToolOutput } from "../types.js";
import { argText, fillPlaceholders } from "./placeholders.js";

type HttpImplSpec = z.infer<typeof HttpImpl>;

/** Where an http call looks names up, and where it may keep its connection for the next call. */
export interface HttpImplOptions {
  /** The resolver the host rules check names with (default: the system's). */
  lookup?: HostLookup;
  /**
   * Connections kept between calls, and the scope a connection may be reused in: the run and the
   * declaration (impl/kinds.ts). Absent: every call opens its own and closes it.
   */
  kept?: { connections: KeptConnections; scope: string };
}

/** The URL a call will reach: `{param}` parts filled, URL-encoded. */
export function httpUrl(impl: HttpImplSpec, args: Record<string, unknown>): URL {
  const url = new URL(fillPlaceholders(impl.url, args, encodeURIComponent) ?? impl.url);
  if (impl.method === "GET" || impl.method === "DELETE") {
    const used = new Set([...impl.url.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]));
    for (const [k, v] of Object.entries(args))
      if (!used.has(k) && v !== undefined) url.searchParams.set(k, argText(v));
  }
  return url;
}

/**
 * Runs an `http` impl through undici: the arguments as a JSON body (as the query string for GET
 * and DELETE), the response body read up to 50 KB. The host rules (net/host-rules.ts) decide here,
 * in the server, on the name and on the address it resolves to, and the connection goes to that
 * address and no other (the gate checked the name too; this is the last line). Redirects are not
 * followed (undici's default): a 3xx is answered with its Location, for the model to call a
 * granted URL itself. A status of 400 or more is a failure that shows the start of the body.
 *
 * A call run while its started record is stored (ctx.intentDurable) prepares meanwhile: the URL
 * built, the host rules checked, the connection to the checked address opened; then it waits for
 * the record, and only then sends its request, with the record's `<vid>/<n>` as Idempotency-Key.
 */
export async function runHttpImpl(
  impl: HttpImplSpec,
  args: Record<string, unknown>,
  ctx: ToolContext,
  allowedHosts: readonly string[],
  options: HttpImplOptions = {},
): Promise<ToolOutput> {
  const { lookup = systemLookup, kept } = options;
  const url = httpUrl(impl, args);
  const resolved = await resolveTarget(targetOfUrl(url), allowedHosts, { lookup });
  if (!resolved.ok)
    throw resolved.code === "denied"
      ? new ToolError(
          "denied",
          `the policy does not allow http tools to reach ${url.host}: ${resolved.reason}. A person grants a host in /byteseek/policy (grants.default.net or the run's entry); until then use another tool, or ask the user.`,
          { details: { url: url.href } },
        )
      : new ToolError("failed", `request to ${url.origin} failed: ${resolved.reason}`, {
          details: { url: url.href },
        });
  // a connection is kept for the same tool of the same run, to the same origin and checked address
  const keptKey = kept && JSON.stringify([kept.scope, impl, url.origin, resolved.address, resolved.family]);
  const connection =
    (keptKey && kept?.connections.take(keptKey)) || openPinned(url, resolved.address, resolved.family);
  const read = { whole: false };
  try {
    await opened(connection, ctx.signal, url);
    // nothing of the request leaves before the call's started record is stored
    const idempotencyKey = ctx.intentDurable
      ? (await ctx.intentDurable()).idempotencyKey
      : ctx.idempotencyKey;
    return await fetchPinned(impl, args, ctx, url, connection.dispatcher, idempotencyKey, read);
  } finally {
    if (keptKey && kept && read.whole) await kept.connections.keep(keptKey, connection);
    else await connection.close();
  }
}

/** Waits for the call's connection to open; a connection that cannot be, or an abort, ends the call unsent. */
async function opened(connection: PinnedConnection, signal: AbortSignal, url: URL): Promise<void> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError(signal, url));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => {});
  try {
    await Promise.race([connection.opened, aborted]);
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw requestFailed(url, err);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

async function fetchPinned(
  impl: HttpImplSpec,
  args: Record<string, unknown>,
  ctx: ToolContext,
  url: URL,
  dispatcher: Dispatcher,
  idempotencyKey: string | undefined,
  /** Set once the whole answer was read: its connection may serve another request. */
  read: { whole: boolean },
): Promise<ToolOutput> {
  const withBody = impl.method !== "GET" && impl.method !== "DELETE";
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method: impl.method,
      headers: {
        accept: "application/json, text/plain;q=0.9, */*;q=0.5",
        ...(withBody ? { "content-type": "application/json" } : {}),
        ...(impl.headers ?? {}),
        // the same on a resumed run's retry, so the server can answer it without doing it twice
        ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
      },
      body: withBody ? JSON.stringify(args) : undefined,
      signal: ctx.signal,
      dispatcher,
    });
  } catch (err) {
    if (ctx.signal.aborted) throw abortError(ctx.signal, url);
    throw requestFailed(url, err);
  }

  const chunks: Buffer[] = [];
  let bytes = 0;
  let truncated = false;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const room = IMPL_OUTPUT_BYTES - bytes;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        bytes += room;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      bytes += chunk.length;
    }
  } catch (err) {
    if (ctx.signal.aborted) throw abortError(ctx.signal, url);
    throw new ToolError("failed", `reading the response of ${url.origin} failed: ${(err as Error).message}`);
  } finally {
    if (truncated) res.body.destroy();
  }
  read.whole = !truncated;
  let text = Buffer.concat(chunks).toString("utf8");
  if (truncated) text += `\n[… response truncated at ${IMPL_OUTPUT_BYTES} bytes]`;
  const contentType = String(res.headers["content-type"] ?? "");
  const details = { url: url.href, status: res.statusCode, contentType, bytes, truncated };
  if (res.statusCode >= 400)
    throw new ToolError(
      "http_status",
      `${impl.method} ${url.href} answered ${res.statusCode}: ${text.slice(0, 2000) || "(empty body)"}`,
      { details },
    );
  const location = res.headers.location;
  if (res.statusCode >= 300 && res.statusCode < 400 && location)
    return {
      text: `${impl.method} ${url.href} answered ${res.statusCode}, a redirect to ${String(location)}; redirects are not followed. Call a tool whose URL is that one (its host must be granted), or ask the user.`,
      details: { ...details, location: String(location) },
    };
  return { text: text.length ? text : `(empty response, status ${res.statusCode})`, details };
}

/**
 * Node's codes for a server certificate that TLS refused: OpenSSL's verify results (X509_V_ERR_*
 * without the prefix), and Node's own for a certificate that does not name the host.
 */
const CERTIFICATE_REFUSED = new Set([
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "HOSTNAME_MISMATCH",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "CERT_CHAIN_TOO_LONG",
  "CERT_REVOKED",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
]);

/**
 * A request that failed before its answer came: its connection could not be made, or broke. A
 * refused certificate (nothing of a request is sent before TLS accepts the server) says so, and
 * that calling again will not help: only another URL, or a person fixing the server's certificate
 * (or the CAs byteseek's server trusts), can.
 */
function requestFailed(url: URL, err: unknown): ToolError {
  const { message, code } = err as Error & { code?: unknown };
  const refused = typeof code === "string" && CERTIFICATE_REFUSED.has(code);
  const text = refused
    ? `request to ${url.origin} failed: its TLS certificate was refused (${message}), so nothing was sent. The server must present a certificate valid for ${url.hostname} from a certificate authority byteseek's server trusts; calling again will not help: check the tool's URL, or ask the user.`
    : `request to ${url.origin} failed: ${message}`;
  return new ToolError("failed", text, {
    details: { url: url.href, ...(refused ? { tls: code } : {}) },
    cause: err,
  });
}

function abortError(signal: AbortSignal, url: URL): ToolError {
  const reason = signal.reason;
  const base = reason instanceof ToolError ? reason : new ToolError("aborted", "the call was aborted");
  return new ToolError(base.code, `${base.message} (request to ${url.origin})`, {
    details: { url: url.href },
  });
}
