/**
 * An HTTP server's sign-in as `kvspace mcp status`, `GET /v1/mcp` and the page show it: never a
 * token, only whether there is one, when it expires and what a person must do.
 */
import type { HttpEntry } from "../registry.js";

export interface McpAuthStatus {
  /**
   * `signed-in`: tokens are kept; `needs-sign-in`: the server asked for a sign-in byteseek does not
   * have (or that expired, was revoked, or lacks scopes); `none`: no sign-in was asked for or made.
   */
  state: "signed-in" | "needs-sign-in" | "none";
  /** When the access token expires (ms since the epoch). */
  expiresAt?: number;
  /** Whether a refresh token is kept (the token is renewed before it expires). */
  refreshable?: boolean;
  /** Scopes the server asked for that the sign-in lacks. */
  needScope?: string;
  /** A sign-in under way (an authorization URL handed out, its redirect not back yet). */
  pending?: boolean;
  /** Why a sign-in is needed. */
  error?: string;
}

/** `lastError` is the connection's or last sync's error: a sign-in it asked for shows here too. */
export function authStatus(entry: HttpEntry, lastError?: string): McpAuthStatus {
  const session = entry.oauth?.session ?? {};
  const tokens = session.tokens as { refresh_token?: unknown } | undefined;
  const asked = session.error !== undefined || (lastError?.includes("needs a person to sign in") ?? false);
  const usable = tokens !== undefined && (session.url === undefined || session.url === entry.url);
  const state = usable && session.error === undefined ? "signed-in" : asked ? "needs-sign-in" : "none";
  return {
    state,
    ...(usable && session.expiresAt !== undefined ? { expiresAt: session.expiresAt } : {}),
    ...(usable ? { refreshable: typeof tokens?.refresh_token === "string" } : {}),
    ...(session.needScope !== undefined ? { needScope: session.needScope } : {}),
    ...(session.state !== undefined ? { pending: true } : {}),
    ...(session.error !== undefined ? { error: session.error } : {}),
  };
}
