/**
 * The server's credential: its token, sent as `Authorization: Bearer <token>` (the CLI, MCP hosts,
 * scripts), or the cookie the web page got in exchange for it (`/?token=…`, as Jupyter does). Every
 * route needs one but `/healthz` and the page's shell and assets (`config: { public: true }`), which
 * hold no data.
 *
 * The cookie is `<session>.<mac>`: a random session id and its HMAC under the token, so the server
 * keeps no session table, a restart with the same token keeps the page signed in, and a new token
 * ends every session. It is HttpOnly (no script reads it) and SameSite=Strict (no other site's
 * request carries it); the Host and Origin checks (server/request-guard.ts) stand in front of both.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyRequest } from "fastify";
import { ServerError } from "./server-error.js";

/** Paths answered without a credential. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(["/healthz"]);

/**
 * What let a request in, as an approval records it: the bearer token (`id` tells tokens apart
 * without showing one), a page's cookie session, or nothing on a server run with `--no-auth`.
 */
export type Credential =
  | { kind: "token"; id: string }
  | { kind: "cookie"; id: string; session: string }
  | { kind: "none" };

declare module "fastify" {
  interface FastifyRequest {
    /** The credential the request carried (set by the app's gate before any handler runs). */
    credential?: Credential;
  }
}

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest();

/** A short, stable name for a token that does not reveal it: `sha256:` and 8 hex digits of its hash. */
export function tokenId(token: string): string {
  return `sha256:${digest(token).toString("hex").slice(0, 8)}`;
}

/** How an approval names the credential that decided it (`kvspace`, the page). */
export function describeCredential(c: Credential): string {
  if (c.kind === "token") return `bearer token ${c.id}`;
  if (c.kind === "cookie") return `page cookie session ${c.session} (token ${c.id})`;
  return "no credential (the server runs with --no-auth)";
}

/** The credential a request came in with, as an approval it decides names it. */
export function requestVia(req: { credential?: Credential | undefined }): string {
  return req.credential ? describeCredential(req.credential) : "no credential";
}

export interface CredentialCheck {
  /** The cookie's name: one per token, so two servers on one host keep their own. */
  cookieName: string;
  /** The credential a request's headers carry, or undefined. */
  of(headers: IncomingHttpHeaders): Credential | undefined;
  /** Whether `token` is the server's (timing-safe). */
  holds(token: string | undefined): boolean;
  /** A new page session for the right token: its Set-Cookie header; undefined for any other. */
  exchange(token: string): { setCookie: string; session: string } | undefined;
}

/** The credential check of a server whose token is `token`. */
export function createCredentialCheck(token: string): CredentialCheck {
  const want = digest(token);
  const id = tokenId(token);
  const cookieName = `byteseek-${digest(`cookie:${token}`).toString("hex").slice(0, 12)}`;
  const mac = (session: string) => createHmac("sha256", token).update(`byteseek-page:${session}`).digest();
  const holds = (given: string | undefined) => given !== undefined && timingSafeEqual(digest(given), want);

  function bearer(header: string | undefined): boolean {
    const m = typeof header === "string" ? /^Bearer[ ]+(.+)$/i.exec(header.trim()) : null;
    return m !== null && holds(m[1]);
  }

  function cookie(header: string | undefined): string | undefined {
    if (typeof header !== "string") return undefined;
    for (const part of header.split(";")) {
      const eq = part.indexOf("=");
      if (eq < 0 || part.slice(0, eq).trim() !== cookieName) continue;
      const m = /^([A-Za-z0-9_-]{16,64})\.([A-Za-z0-9_-]{43})$/.exec(part.slice(eq + 1).trim());
      if (m && timingSafeEqual(Buffer.from(m[2] as string, "base64url"), mac(m[1] as string))) return m[1];
    }
    return undefined;
  }

  return {
    cookieName,
    holds,
    of(headers) {
      if (bearer(headers.authorization)) return { kind: "token", id };
      const session = cookie(headers.cookie);
      return session === undefined ? undefined : { kind: "cookie", id, session };
    },
    exchange(given) {
      if (!holds(given)) return undefined;
      const session = randomBytes(12).toString("base64url");
      const value = `${session}.${mac(session).toString("base64url")}`;
      // no Max-Age: a browser session's; Path=/ for the API and the page alike
      return { session, setCookie: `${cookieName}=${value}; Path=/; HttpOnly; SameSite=Strict` };
    },
  };
}

/** The path of a request URL (without its query). */
export function pathOf(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

/**
 * An onRequest check: the request's credential (kept on it for what it decides), or
 * HTTP_UNAUTHORIZED saying what to send. Open paths and public routes pass without one.
 */
export function createAuthCheck(check: CredentialCheck): (req: FastifyRequest) => void {
  return function checkCredential(req) {
    const credential = check.of(req.headers);
    if (credential !== undefined) {
      req.credential = credential;
      return;
    }
    // Routes marked `config: { public: true }` (the web page's shell, which holds no data) are open too.
    if (OPEN_PATHS.has(pathOf(req.url)) || req.routeOptions.config.public === true) return;
    const header = req.headers.authorization;
    throw new ServerError(
      "HTTP_UNAUTHORIZED",
      header === undefined
        ? "this server needs a token: send Authorization: Bearer <token> (BYTESEEK_TOKEN, or the token in the store folder's token file; byteseek serve prints the page's address with it)"
        : "the bearer token is not the server's token (BYTESEEK_TOKEN, or the one in the store folder's token file)",
    );
  };
}
