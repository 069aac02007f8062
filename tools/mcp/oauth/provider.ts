/**
 * The MCP SDK's OAuthClientProvider over a registry entry: the client registration, tokens, PKCE
 * verifier and discovery state are the entry's `oauth.session` (store.ts), so every byteseek process
 * on the store shares one sign-in and a run never reads it (a secret field).
 *
 * Two modes. `call` backs the connections of the pool: it presents and refreshes tokens, and where
 * the SDK would send a person to the authorization server it throws `mcp_sign_in` instead (nothing
 * is registered or started on a call's behalf). `sign-in` backs `kvspace mcp login` and the page's
 * Sign in: it registers the client when needed and keeps the verifier and state for the redirect.
 */
import { randomBytes } from "node:crypto";
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { Tree } from "../../../tree/types.js";
import { ToolError } from "../../errors.js";
import type { OAuthSession } from "./entry.js";
import { readOAuth, updateSession } from "./store.js";

/** The redirect URI a connection's provider names when none was used yet (it never redirects). */
export const DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback";

export interface TreeOAuthProviderOptions {
  tree: Tree;
  server: string;
  mode: "call" | "sign-in";
  /** sign-in: where the authorization server sends the person back. */
  redirectUri?: string;
  /** sign-in: the https URL of a client ID metadata document (the entry's oauth.clientMetadataUrl). */
  clientMetadataUrl?: string;
}

export interface TreeOAuthProvider extends OAuthClientProvider {
  /** sign-in: the authorization URL the SDK asked to send the person to. */
  readonly authorizationUrl: URL | undefined;
  /** sign-in: the state this sign-in checks on the redirect. */
  readonly stateValue: string;
}

/** What a call says when the server wants a person to sign in. */
export function signInRequired(server: string, why: string): ToolError {
  return new ToolError(
    "mcp_sign_in",
    `the MCP server "${server}" needs a person to sign in (${why}): they run kvspace mcp login ${server}, or press Sign in on the web page's MCP view; until then its tools cannot be called`,
    { details: { server } },
  );
}

export function createTreeOAuthProvider(options: TreeOAuthProviderOptions): TreeOAuthProvider {
  const { tree, server, mode } = options;
  // the state names the server, so a redirect to byteseek's own callback route finds the sign-in
  const stateValue = `${server}.${randomBytes(16).toString("base64url")}`;
  let authorizationUrl: URL | undefined;
  let cachedRedirect: string | undefined = options.redirectUri;

  const read = () => readOAuth(tree, server);
  const save = (change: (s: OAuthSession) => OAuthSession | undefined) => updateSession(tree, server, change);

  const redirect = (): string => cachedRedirect ?? DEFAULT_REDIRECT_URI;

  const provider: TreeOAuthProvider = {
    get authorizationUrl() {
      return authorizationUrl;
    },
    stateValue,
    ...(options.clientMetadataUrl ? { clientMetadataUrl: options.clientMetadataUrl } : {}),
    get redirectUrl() {
      return redirect();
    },
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: "byteseek",
        redirect_uris: [redirect()],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    state: () => stateValue,
    async clientInformation(): Promise<StoredOAuthClientInformation | undefined> {
      const { config, session } = await read();
      if (mode === "call") cachedRedirect = session.redirectUri ?? cachedRedirect;
      const stored = session.client as StoredOAuthClientInformation | undefined;
      if (config.clientId !== undefined) {
        return {
          client_id: config.clientId,
          ...(config.clientSecret !== undefined ? { client_secret: config.clientSecret } : {}),
          ...(stored?.client_id === config.clientId && stored.issuer ? { issuer: stored.issuer } : {}),
        };
      }
      if (stored) return stored;
      // a call never registers a client: registering is the first step of a person's sign-in
      if (mode === "call") throw signInRequired(server, "it was never signed in to");
      return undefined;
    },
    async saveClientInformation(info) {
      await save((s) => ({ ...s, client: plain(info) }));
    },
    async tokens(): Promise<StoredOAuthTokens | undefined> {
      const { url, session } = await read();
      // tokens given for another URL (the entry was pointed elsewhere since) are never presented
      if (session.url !== undefined && session.url !== url) return undefined;
      return session.tokens as StoredOAuthTokens | undefined;
    },
    async saveTokens(tokens) {
      const expiresAt =
        typeof tokens.expires_in === "number" ? Date.now() + tokens.expires_in * 1000 : undefined;
      const { url } = await read();
      await save((s) => {
        const next: OAuthSession = { ...s, tokens: plain(tokens), url };
        delete next.error;
        if (expiresAt !== undefined) next.expiresAt = expiresAt;
        else delete next.expiresAt;
        return next;
      });
    },
    async redirectToAuthorization(url) {
      if (mode === "sign-in") {
        authorizationUrl = url;
        return;
      }
      // a call reached the point where a person must sign in: say so, and what scopes are wanted
      const scope = url.searchParams.get("scope") ?? undefined;
      const { session } = await read();
      const why = session.tokens
        ? scope && session.needScope !== scope
          ? `it asks for the scopes "${scope}"`
          : "its sign-in expired or was revoked"
        : "it was never signed in to";
      if (session.error !== why || (scope !== undefined && session.needScope !== scope))
        await save((s) => ({ ...s, error: why, ...(scope !== undefined ? { needScope: scope } : {}) }));
      throw signInRequired(server, why);
    },
    async saveCodeVerifier(verifier) {
      // a call never starts a sign-in: the verifier of one under way stays as it is
      if (mode === "call") return;
      await save((s) => ({
        ...s,
        verifier,
        state: stateValue,
        redirectUri: redirect(),
        startedAt: Date.now(),
      }));
    },
    async codeVerifier() {
      const { session } = await read();
      if (!session.verifier)
        throw new ToolError(
          "mcp_sign_in",
          `no sign-in to "${server}" is under way; start one with kvspace mcp login ${server}`,
        );
      return session.verifier;
    },
    async saveDiscoveryState(state: OAuthDiscoveryState) {
      await save((s) => ({ ...s, discovery: plain(state) }));
    },
    async discoveryState() {
      const { session } = await read();
      return session.discovery as OAuthDiscoveryState | undefined;
    },
    async invalidateCredentials(scope) {
      await save((s) => {
        const next = { ...s };
        if (scope === "all" || scope === "tokens") {
          delete next.tokens;
          delete next.expiresAt;
        }
        if (scope === "all" || scope === "client") delete next.client;
        if (scope === "all" || scope === "verifier") delete next.verifier;
        if (scope === "all" || scope === "discovery") delete next.discovery;
        return next;
      });
    },
  };
  return provider;
}

/** The SDK's documents as tree json: fields it left undefined are dropped. */
function plain(v: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
}
