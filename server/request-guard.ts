/**
 * Requests from other sites are refused before anything runs: the guard sits in the node:http
 * server itself (server/front-door.ts), in front of the fast path and fastify's router alike, so every
 * route — the API, server-sent events, the web page and its assets, /healthz, a 404, and any route
 * added later — passes the same two checks:
 *
 * - `Host` must name this server: 127.0.0.1, localhost or [::1] (any port); with a token, also the
 *   names in BYTESEEK_ALLOWED_HOSTS. A page whose DNS name was re-pointed at 127.0.0.1 (DNS
 *   rebinding) sends its own name, and gets 421.
 * - An `Origin`, when present, must be this server's own (`http://` or `https://` and the Host the
 *   request named). Browsers send Origin on every cross-site request that is not a plain GET, so a
 *   form or fetch from another site gets 403; the web page is same-origin and passes.
 *
 * `app.inject` does not go through the server, so it does not go through the guard either.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ServerError } from "./errors.js";

/** Host names every server answers to: loopback only. */
export const LOOPBACK_HOSTS: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];

export interface RequestGuardOptions {
  /**
   * Further host names the Host header may carry (BYTESEEK_ALLOWED_HOSTS), honoured only with a
   * token: without one, a server answers loopback names only.
   */
  allowedHosts?: readonly string[];
  /** Whether the server needs a token (the extra host names apply only then). */
  token: boolean;
}

/** Says why a request is refused, or undefined when it may go on. */
export type RequestGuard = (req: IncomingMessage) => ServerError | undefined;

/** The host name of a Host header (or of a configured name): lowercase, without the port. */
export function hostName(host: string): string | undefined {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    if (end < 0) return undefined;
    const rest = h.slice(end + 1);
    return rest === "" || /^:[0-9]{1,5}$/.test(rest) ? h.slice(0, end + 1) : undefined;
  }
  const colon = h.indexOf(":");
  if (colon < 0) return h === "" ? undefined : h;
  // A bare IPv6 address (no brackets) in a configured name.
  if (h.indexOf(":", colon + 1) >= 0) return `[${h}]`;
  return /^[0-9]{1,5}$/.test(h.slice(colon + 1)) && colon > 0 ? h.slice(0, colon) : undefined;
}

export function createRequestGuard(o: RequestGuardOptions): RequestGuard {
  const allowed = new Set(LOOPBACK_HOSTS);
  if (o.token)
    for (const name of o.allowedHosts ?? []) {
      const n = hostName(name);
      if (n !== undefined) allowed.add(n);
    }
  const names = [...allowed].join(", ");
  const refuseHost = (host: string | undefined): ServerError => {
    const shown = String(host ?? "").slice(0, 100);
    return new ServerError(
      "HTTP_MISDIRECTED",
      `this server answers requests for ${names} only, not ${JSON.stringify(shown)}` +
        (o.token
          ? ": add the name to BYTESEEK_ALLOWED_HOSTS"
          : ": reach it at http://127.0.0.1, or set BYTESEEK_TOKEN and BYTESEEK_ALLOWED_HOSTS"),
      { host: shown },
    );
  };
  // The Host header last found allowed: clients send the same one, request after request.
  let lastAllowed: string | undefined;
  return function guardRequest(req) {
    const host = req.headers.host;
    if (host === undefined) return refuseHost(host);
    if (host !== lastAllowed) {
      const name = hostName(host);
      if (name === undefined || !allowed.has(name)) return refuseHost(host);
      lastAllowed = host;
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const h = host.trim().toLowerCase();
      const from = origin.toLowerCase();
      if (from !== `http://${h}` && from !== `https://${h}`)
        return new ServerError(
          "HTTP_FORBIDDEN_ORIGIN",
          `requests from other sites are refused: Origin ${JSON.stringify(origin.slice(0, 100))} is not this server's (http://${h})`,
          { origin: origin.slice(0, 100) },
        );
    }
    return undefined;
  };
}

/**
 * Answers a refused request on the raw response: the error body, the headers every answer carries,
 * and `connection: close` (its body, if any, is never read). `written` runs once it is sent.
 */
export function sendRefusal(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string>,
  written?: () => void,
): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    ...headers,
    connection: "close",
  });
  res.end(body, written);
}
