/**
 * The device authorization grant (RFC 8628) for a machine without a browser (`byteseek serve` on a
 * headless host): `kvspace mcp login <server> --device` asks the authorization server for a user
 * code, shows the person where to type it, and polls the token endpoint until they approved it.
 *
 * The SDK has no device flow, so this is the small part it lacks, on the SDK's own pieces: the same
 * discovery as the code flow (the challenge, protected resource metadata, authorization server
 * metadata), the same resource check (`selectResourceURL`: metadata naming another resource is
 * refused, so no token is asked for another audience), the same client (pre-registered, client ID
 * metadata document or dynamic registration) and the SDK's `fetchToken` for each poll (client
 * authentication, the resource indicator, the token response's schema). The tokens are saved by the
 * tree provider exactly as a code-flow sign-in saves them, so refresh and status work the same.
 *
 * What an authorization server answers is not trusted: the user code and the URIs shown to the
 * person are checked (no control characters reach a terminal, only http(s) URLs), and the polling
 * is bounded — at least MIN_INTERVAL_S between polls whatever `interval` says, `slow_down` adds to
 * it, and the wait ends at `expires_in` (at most `maxWaitMs`) or when the signal aborts.
 */
import {
  type AuthorizationServerMetadata,
  assertSecureTokenEndpoint,
  computeScopeUnion,
  discoverOAuthServerInfo,
  type FetchLike,
  fetchToken,
  type OAuthClientInformationMixed,
  OAuthError,
  registerClient,
  selectClientAuthMethod,
  selectResourceURL,
} from "@modelcontextprotocol/client";
import { z } from "zod";
import type { Tree } from "../../../tree/types.js";
import { ToolError } from "../../errors.js";
import { createTreeOAuthProvider, type TreeOAuthProvider } from "./provider.js";
import { askChallenge, clearSignIn, type SignInOptions, signInFailed } from "./sign-in.js";
import { readOAuth, updateSession } from "./store.js";

export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/** The fewest seconds between two polls, whatever the authorization server says (RFC 8628's default is 5). */
export const MIN_INTERVAL_S = 1;
/** `slow_down` adds this many seconds to the interval (RFC 8628 §3.5). */
export const SLOW_DOWN_S = 5;
/** The longest a sign-in waits for the person, whatever `expires_in` says. */
export const MAX_WAIT_MS = 15 * 60_000;

/** What the person is shown: where to go and the code to type there. */
export interface DevicePrompt {
  verificationUri: string;
  userCode: string;
  /** The URI with the code in it, where the authorization server offers one. */
  verificationUriComplete?: string;
  /** When the code stops working (ms since the epoch). */
  expiresAt: number;
}

export interface DeviceSignInOptions extends SignInOptions {
  /** Shows the person the prompt (the CLI prints it); polling begins once it returns. */
  show(prompt: DevicePrompt): void | Promise<void>;
  /** Stops the polling (the person pressed Ctrl-C). */
  signal?: AbortSignal;
  /** The wait between polls; tests record the waits instead of sleeping. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The longest wait for the person (default MAX_WAIT_MS). */
  maxWaitMs?: number;
}

/** Printable ASCII only: the code goes to a terminal and a page. */
const UserCode = z.string().regex(/^[\x20-\x7e]{1,64}$/, "a user code of at most 64 printable characters");
const ShownUrl = z
  .string()
  .max(2048)
  .refine(isShowableUrl, "an https URL (or http on the loopback interface)");
const DeviceAuthorization = z.object({
  device_code: z.string().min(1).max(4096),
  user_code: UserCode,
  verification_uri: ShownUrl,
  verification_uri_complete: ShownUrl.optional(),
  expires_in: z.number().positive(),
  interval: z.number().nonnegative().optional(),
});

/** Signs in by the device grant; answers as the code flow's finishSignIn does. */
export async function signInWithDevice(
  tree: Tree,
  server: string,
  options: DeviceSignInOptions,
): Promise<{ expiresAt?: number; scope?: string }> {
  const { signal } = options;
  const fetchFn = withSignal(options.fetchFn ?? fetch, signal);
  const sleep = options.sleep ?? abortableSleep;
  try {
    const begun = await beginDevice(tree, server, fetchFn);
    const shown = shownPrompt(begun.answer);
    await options.show(shown);
    const maxWaitMs = Math.min(begun.answer.expires_in * 1000, options.maxWaitMs ?? MAX_WAIT_MS);
    const started = Date.now();
    let intervalS = Math.max(MIN_INTERVAL_S, begun.answer.interval ?? 5);
    let waited = 0;
    for (;;) {
      // bounded by the time waited as well as the clock: a sleep that returns early cannot make it spin
      if (Math.max(waited, Date.now() - started) + intervalS * 1000 > maxWaitMs)
        throw new ToolError(
          "mcp_sign_in",
          `nobody approved the code ${shown.userCode} at ${shown.verificationUri} in time; run kvspace mcp login ${server} --device again`,
        );
      await sleep(intervalS * 1000, signal);
      waited += intervalS * 1000;
      const answer = await poll(begun, fetchFn);
      if (answer === "authorization_pending") continue;
      if (answer === "slow_down") {
        intervalS += SLOW_DOWN_S;
        continue;
      }
      break;
    }
    return await clearSignIn(tree, server);
  } catch (err) {
    if (signal?.aborted) throw new ToolError("aborted", `the sign-in to "${server}" was stopped`);
    throw deviceFailure(server, err);
  }
}

interface BegunDevice {
  provider: TreeOAuthProvider & { prepareTokenRequest(): URLSearchParams };
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata;
  resource?: string;
  answer: z.infer<typeof DeviceAuthorization>;
}

/** Discovery, the resource check, the client, and the device authorization request. */
async function beginDevice(tree: Tree, server: string, fetchFn: FetchLike): Promise<BegunDevice> {
  const { url, config, session } = await readOAuth(tree, server);
  const challenge = await askChallenge(url, fetchFn);
  const info = await discoverOAuthServerInfo(url, {
    ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
    fetchFn,
  });
  const metadata = info.authorizationServerMetadata;
  const endpoint = (metadata as { device_authorization_endpoint?: unknown } | undefined)
    ?.device_authorization_endpoint;
  if (!metadata || typeof endpoint !== "string")
    throw new ToolError(
      "mcp_sign_in",
      `the authorization server of "${server}" offers no device sign-in (its metadata has no device_authorization_endpoint); use kvspace mcp login ${server} --paste instead`,
    );
  let deviceCode = "";
  const base = createTreeOAuthProvider({ tree, server, mode: "sign-in" });
  const provider = Object.assign(base, {
    prepareTokenRequest: () => new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode }),
  });
  // the metadata must name this server: a token asked for another resource would be another audience's
  const selected = await selectResourceURL(url, provider, info.resourceMetadata);
  const resource = selected && info.resourceMetadata ? info.resourceMetadata.resource : selected?.href;
  const issuer = metadata.issuer ?? info.authorizationServerUrl;
  await updateSession(tree, server, (s) => ({
    ...s,
    discovery: JSON.parse(
      JSON.stringify({
        ...info,
        ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl.href } : {}),
      }),
    ) as Record<string, unknown>,
  }));
  const scope = computeScopeUnion(
    config.scope,
    challenge.scope ?? info.resourceMetadata?.scopes_supported?.join(" "),
    session.needScope,
  );
  const client = await deviceClient(
    tree,
    server,
    provider,
    metadata,
    info.authorizationServerUrl,
    issuer,
    scope,
    fetchFn,
  );
  const params = new URLSearchParams();
  if (scope) params.set("scope", scope);
  if (resource) params.set("resource", resource);
  const headers = new Headers({
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  });
  authenticate(client, metadata, headers, params);
  // the client's secret, if any, goes only to an https endpoint (or the loopback interface)
  const res = await fetchFn(assertSecureTokenEndpoint(endpoint), { method: "POST", headers, body: params });
  const body = (await res.json().catch(() => undefined)) as unknown;
  if (!res.ok) {
    const error = (body as { error?: unknown } | undefined)?.error;
    throw new ToolError(
      "mcp_sign_in",
      `the authorization server of "${server}" refused the device sign-in (${res.status}${typeof error === "string" ? ` ${error.slice(0, 60)}` : ""})`,
    );
  }
  const parsed = DeviceAuthorization.safeParse(body);
  if (!parsed.success)
    throw new ToolError(
      "mcp_sign_in",
      `the authorization server of "${server}" answered the device sign-in with something byteseek does not show: ${parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")
        .slice(0, 300)}`,
    );
  deviceCode = parsed.data.device_code;
  return {
    provider,
    authorizationServerUrl: info.authorizationServerUrl,
    metadata,
    ...(resource ? { resource } : {}),
    answer: parsed.data,
  };
}

/**
 * The client the device grant uses: the pre-registered one, the one kept from an earlier sign-in
 * when it may use the grant, the client ID metadata document's URL, or one registered now for it.
 */
async function deviceClient(
  tree: Tree,
  server: string,
  provider: TreeOAuthProvider,
  metadata: AuthorizationServerMetadata,
  authorizationServerUrl: string,
  issuer: string,
  scope: string | undefined,
  fetchFn: FetchLike,
): Promise<OAuthClientInformationMixed> {
  const { config } = await readOAuth(tree, server);
  const kept = await provider.clientInformation({ issuer });
  const grants = (kept as { grant_types?: unknown } | undefined)?.grant_types;
  const keptFits =
    kept !== undefined &&
    (config.clientId !== undefined ||
      !metadata.registration_endpoint ||
      !Array.isArray(grants) ||
      grants.includes(DEVICE_GRANT)) &&
    (kept.issuer === undefined || kept.issuer === issuer);
  if (kept && keptFits) return kept;
  if (metadata.client_id_metadata_document_supported === true && config.clientMetadataUrl) {
    const info = { client_id: config.clientMetadataUrl, issuer };
    await provider.saveClientInformation?.(info, { issuer });
    return info;
  }
  const registered = await registerClient(authorizationServerUrl, {
    metadata,
    clientMetadata: {
      client_name: "byteseek",
      redirect_uris: [],
      grant_types: [DEVICE_GRANT, "refresh_token"],
      response_types: [],
      token_endpoint_auth_method: "none",
    },
    ...(scope ? { scope } : {}),
    fetchFn,
  });
  const info = { ...registered, issuer };
  await provider.saveClientInformation?.(info, { issuer });
  return info;
}

/** One poll of the token endpoint: tokens saved, or the answer that says to wait. */
async function poll(
  begun: BegunDevice,
  fetchFn: FetchLike,
): Promise<"authorization_pending" | "slow_down" | "tokens"> {
  try {
    const tokens = await fetchToken(begun.provider, begun.authorizationServerUrl, {
      metadata: begun.metadata,
      ...(begun.resource ? { resource: begun.resource } : {}),
      fetchFn,
    });
    const issuer = begun.metadata.issuer ?? begun.authorizationServerUrl;
    await begun.provider.saveTokens({ ...tokens, issuer }, { issuer });
    return "tokens";
  } catch (err) {
    if (OAuthError.isInstance(err) && (err.code === "authorization_pending" || err.code === "slow_down"))
      return err.code;
    throw err;
  }
}

function deviceFailure(server: string, err: unknown): ToolError {
  if (OAuthError.isInstance(err)) {
    if (err.code === "access_denied")
      return new ToolError(
        "mcp_sign_in",
        `the sign-in to "${server}" was refused at the authorization server (access_denied); nothing was saved`,
      );
    if (err.code === "expired_token")
      return new ToolError(
        "mcp_sign_in",
        `the code expired before anyone approved it; run kvspace mcp login ${server} --device again`,
      );
  }
  return signInFailed(server, err);
}

function shownPrompt(a: z.infer<typeof DeviceAuthorization>): DevicePrompt {
  return {
    // URL's own serialisation: anything odd left in it is percent-encoded
    verificationUri: new URL(a.verification_uri).href,
    userCode: a.user_code,
    ...(a.verification_uri_complete
      ? { verificationUriComplete: new URL(a.verification_uri_complete).href }
      : {}),
    expiresAt: Date.now() + a.expires_in * 1000,
  };
}

function isShowableUrl(s: string): boolean {
  try {
    const u = new URL(s);
    if (u.protocol === "https:") return true;
    return u.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(u.hostname);
  } catch {
    return false;
  }
}

/** Client authentication at the device endpoint, as the SDK chooses it for the token endpoint. */
function authenticate(
  client: OAuthClientInformationMixed,
  metadata: AuthorizationServerMetadata,
  headers: Headers,
  params: URLSearchParams,
): void {
  const method = selectClientAuthMethod(client, metadata.token_endpoint_auth_methods_supported ?? []);
  if (method === "client_secret_basic" && client.client_secret) {
    headers.set("authorization", `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`);
    return;
  }
  params.set("client_id", client.client_id);
  if (method === "client_secret_post" && client.client_secret)
    params.set("client_secret", client.client_secret);
}

function withSignal(fetchFn: FetchLike, signal: AbortSignal | undefined): FetchLike {
  if (!signal) return fetchFn;
  return (url, init) => fetchFn(url, { ...init, signal });
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
