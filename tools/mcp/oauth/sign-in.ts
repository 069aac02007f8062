import { createHash, timingSafeEqual } from "node:crypto";
/**
 * A person's sign-in to an HTTP upstream, in two steps around the browser: `beginSignIn` asks the
 * server for its challenge (the scopes and where its protected resource metadata is), lets the SDK
 * discover the authorization server, register the client (pre-registered, client ID metadata
 * document or dynamic registration) and build the authorization URL with PKCE S256, the state and
 * the resource indicator; `finishSignIn` checks the redirect's state and has the SDK exchange the
 * code. Also the refresh a call makes before a token expires, and signing out.
 */
import {
  auth,
  computeScopeUnion,
  extractWWWAuthenticateParams,
  type FetchLike,
  LATEST_PROTOCOL_VERSION,
} from "@modelcontextprotocol/client";
import type { Tree } from "../../../tree/types.js";
import { ToolError } from "../../errors.js";
import { createTreeOAuthProvider, signInRequired } from "./provider.js";
import { readOAuth, updateSession } from "./store.js";

export interface SignInOptions {
  /** The fetch used for every request of the sign-in (tests, proxies); default the global one. */
  fetchFn?: FetchLike;
}

export interface BegunSignIn {
  /** Where the person goes to sign in. */
  authorizationUrl: string;
  /** The state the redirect must carry back. */
  state: string;
}

/** Starts a sign-in that comes back to `redirectUri`; any sign-in under way is replaced. */
export async function beginSignIn(
  tree: Tree,
  server: string,
  redirectUri: string,
  options: SignInOptions = {},
): Promise<BegunSignIn> {
  const { url, config, session } = await readOAuth(tree, server);
  const challenge = await askChallenge(url, options.fetchFn);
  const scope = computeScopeUnion(config.scope, challenge.scope, session.needScope);
  await updateSession(tree, server, (s) => {
    const next = { ...s };
    delete next.verifier;
    delete next.state;
    // a client registered for another redirect URI (another loopback port) registers again
    const uris = (s.client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    if (config.clientId === undefined && Array.isArray(uris) && !uris.includes(redirectUri))
      delete next.client;
    // discovery is done anew: the server may have moved to another authorization server
    delete next.discovery;
    return next;
  });
  const provider = createTreeOAuthProvider({
    tree,
    server,
    mode: "sign-in",
    redirectUri,
    ...(config.clientMetadataUrl ? { clientMetadataUrl: config.clientMetadataUrl } : {}),
  });
  const result = await auth(provider, {
    serverUrl: url,
    ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
    ...(scope ? { scope } : {}),
    ...(options.fetchFn ? { fetchFn: options.fetchFn } : {}),
    forceReauthorization: true,
  }).catch((err: unknown) => {
    throw signInFailed(server, err);
  });
  if (result !== "REDIRECT" || !provider.authorizationUrl)
    throw new ToolError(
      "mcp_sign_in",
      `the MCP server "${server}" gave tokens without a person signing in; nothing to do`,
    );
  return { authorizationUrl: provider.authorizationUrl.href, state: provider.stateValue };
}

/**
 * Ends the sign-in under way with the URL the authorization server redirected to. A redirect whose
 * state is not the one this sign-in sent is refused (and the sign-in stays under way).
 */
export async function finishSignIn(
  tree: Tree,
  server: string,
  redirected: string | URL,
  options: SignInOptions = {},
): Promise<{ expiresAt?: number; scope?: string }> {
  const { url, session } = await readOAuth(tree, server);
  let params: URLSearchParams;
  try {
    params = new URL(redirected).searchParams;
  } catch {
    throw new ToolError("mcp_sign_in", "that is not the URL the browser was sent back to");
  }
  if (!session.state || !session.verifier)
    throw new ToolError(
      "mcp_sign_in",
      `no sign-in to "${server}" is under way; start one with kvspace mcp login ${server}`,
    );
  if (!sameState(params.get("state"), session.state))
    throw new ToolError(
      "mcp_sign_in",
      `refused: the redirect's state is not the one this sign-in to "${server}" sent (a stale tab, or a forged link); sign in again from the URL printed last`,
    );
  const error = params.get("error");
  if (error !== null)
    throw new ToolError(
      "mcp_sign_in",
      `the authorization server refused the sign-in to "${server}": ${error.slice(0, 80)}`,
    );
  const code = params.get("code");
  if (!code) throw new ToolError("mcp_sign_in", "the redirect carries no authorization code");
  const iss = params.get("iss") ?? undefined;
  const provider = createTreeOAuthProvider({
    tree,
    server,
    mode: "sign-in",
    ...(session.redirectUri ? { redirectUri: session.redirectUri } : {}),
  });
  await auth(provider, {
    serverUrl: url,
    authorizationCode: code,
    ...(iss !== undefined ? { iss } : {}),
    ...(options.fetchFn ? { fetchFn: options.fetchFn } : {}),
  }).catch((err: unknown) => {
    throw signInFailed(server, err);
  });
  return clearSignIn(tree, server);
}

/** A finished sign-in's leftovers (verifier, state, …) cleared, by either flow; what the tokens allow. */
export async function clearSignIn(
  tree: Tree,
  server: string,
): Promise<{ expiresAt?: number; scope?: string }> {
  let out: { expiresAt?: number; scope?: string } = {};
  await updateSession(tree, server, (s) => {
    const next = { ...s };
    for (const k of ["verifier", "state", "startedAt", "needScope", "error"] as const) delete next[k];
    const scope = (s.tokens as { scope?: unknown } | undefined)?.scope;
    out = {
      ...(s.expiresAt !== undefined ? { expiresAt: s.expiresAt } : {}),
      ...(typeof scope === "string" ? { scope } : {}),
    };
    return next;
  });
  return out;
}

/** Forgets the tokens (and any sign-in under way); the client registration is kept for the next sign-in. */
export async function signOut(tree: Tree, server: string): Promise<boolean> {
  let had = false;
  await updateSession(tree, server, (s) => {
    had = s.tokens !== undefined;
    const next = { ...s };
    for (const k of ["tokens", "expiresAt", "verifier", "state", "startedAt", "needScope", "error"] as const)
      delete next[k];
    return next;
  });
  return had;
}

/** Refresh this long before the access token expires. */
export const REFRESH_AHEAD_MS = 60_000;

/**
 * Refreshes the server's tokens when they expire within REFRESH_AHEAD_MS and a refresh token is
 * kept; answers whether it refreshed. A refused refresh leaves the server needing a sign-in.
 */
export async function refreshIfDue(
  tree: Tree,
  server: string,
  options: SignInOptions & { now?: number } = {},
): Promise<boolean> {
  const { url, session } = await readOAuth(tree, server);
  const refresh = (session.tokens as { refresh_token?: unknown } | undefined)?.refresh_token;
  if (typeof refresh !== "string" || session.expiresAt === undefined) return false;
  if (session.expiresAt - (options.now ?? Date.now()) > REFRESH_AHEAD_MS) return false;
  const provider = createTreeOAuthProvider({ tree, server, mode: "call" });
  const result = await auth(provider, {
    serverUrl: url,
    ...(options.fetchFn ? { fetchFn: options.fetchFn } : {}),
  });
  if (result !== "AUTHORIZED") throw signInRequired(server, "its sign-in expired");
  return true;
}

/** The server's answer to a request without a token: its scopes and protected resource metadata, if it says. */
export async function askChallenge(
  url: string,
  fetchFn: FetchLike = fetch,
): Promise<{ scope?: string; resourceMetadataUrl?: URL }> {
  try {
    const res = await fetchFn(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "byteseek", version: "0.1.0" },
        },
      }),
      signal: AbortSignal.timeout(15_000),
    });
    await res.body?.cancel().catch(() => {});
    if (res.status !== 401 && res.status !== 403) return {};
    const { scope, resourceMetadataUrl } = extractWWWAuthenticateParams(res);
    return { ...(scope ? { scope } : {}), ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}) };
  } catch {
    // the well-known fallbacks still find what the server publishes
    return {};
  }
}

export function signInFailed(server: string, err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new ToolError("mcp_sign_in", `the sign-in to "${server}" failed: ${message.slice(0, 300)}`, {
    details: { server },
  });
}

/** The redirect's state against the one sent, in constant time (the callback route is reachable without a token). */
function sameState(given: string | null, sent: string): boolean {
  if (given === null) return false;
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(sent).digest();
  return timingSafeEqual(a, b);
}
