/**
 * An OAuth 2.1 authorization server and an MCP server protected by it, on one loopback port, for
 * the sign-in tests. The MCP side is the SDK's (createMcpHandler, both protocol eras, behind its
 * requireBearerAuth with the expected resource and oauthMetadata-style documents); the
 * authorization server is a small one written here: metadata (OAuth or OpenID discovery), dynamic
 * registration, pre-registered clients, client ID metadata documents, the authorization endpoint
 * (it approves at once, as if a person had signed in), PKCE S256 checked at the token endpoint,
 * refresh tokens, and helpers to expire or revoke what it gave.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AuthInfo,
  createMcpHandler,
  inputRequired,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  requireBearerAuth,
  requireScopes,
} from "@modelcontextprotocol/server";
import { afterAll, beforeAll } from "vitest";
import { z } from "zod";
import { type App, buildApp } from "../../server/app.js";
import { grantEverything, silent } from "../tools/helpers.js";
import { type McpHarness, mcpHarness } from "./helpers.js";

export interface OAuthFixtureOptions {
  /** Where the protected resource metadata is: named in the challenge, at the path-aware or the root well-known, or nowhere. */
  prm: "header" | "path" | "root";
  /** How the authorization server's metadata is found: RFC 8414 or OpenID discovery. */
  asMeta: "oauth" | "oidc";
  /** Dynamic client registration offered. */
  registration: boolean;
  /** Client ID metadata documents accepted. */
  cimd: boolean;
  /** The `resource` the protected resource metadata names (default: the MCP URL). */
  resource?: string;
  /** Tokens are given for this audience instead of the resource asked for. */
  audience?: string;
  /** Seconds an access token lives. */
  expiresIn: number;
  /** The device authorization grant offered (RFC 8628): `device_authorization_endpoint` in the metadata. */
  device: boolean;
  /** What the token endpoint answers a device code's polls, in turn, before it gives tokens (e.g. authorization_pending, slow_down, access_denied, expired_token). */
  deviceAnswers: string[];
  /** The device endpoint's `interval` (absent: none said) and `expires_in`. */
  deviceInterval?: number;
  deviceExpiresIn: number;
  /** Fields laid over the device endpoint's answer (a hostile authorization server). */
  deviceOverride?: Record<string, unknown>;
}

export interface Issued {
  token: string;
  refresh: string;
  clientId: string;
  scopes: string[];
  aud: string;
  exp: number;
  revoked: boolean;
}

export interface OAuthFixture {
  origin: string;
  /** The MCP endpoint. */
  url: string;
  options: OAuthFixtureOptions;
  clients: Map<string, { secret?: string; redirectUris: string[] }>;
  issued: Issued[];
  seen: {
    registrations: number;
    authorize: URLSearchParams[];
    token: { params: URLSearchParams; authorization?: string }[];
    wellKnown: string[];
    refused: number;
    /** The device authorization requests, and the token endpoint's polls with a device code. */
    device: { params: URLSearchParams; authorization?: string }[];
    polls: number;
  };
  /** Plays the browser: opens the authorization URL and answers where the server redirects. */
  approve(authorizationUrl: string): Promise<string>;
  /** Every access token given so far expires now. */
  expireAll(): void;
  /** Every token (access and refresh) given so far is revoked. */
  revokeAll(): void;
  reset(options?: Partial<OAuthFixtureOptions>): void;
  close(): Promise<void>;
}

const DEFAULTS: OAuthFixtureOptions = {
  prm: "header",
  asMeta: "oauth",
  registration: true,
  cimd: false,
  expiresIn: 3600,
  device: false,
  deviceAnswers: [],
  deviceExpiresIn: 600,
};

function mcpServer(): McpServer {
  const server = new McpServer({ name: "protected", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echoes its message", inputSchema: z.object({ message: z.string() }) },
    async ({ message }, ctx) => ({
      content: [
        { type: "text", text: `echo: ${message} (scopes ${ctx.http?.authInfo?.scopes.join(" ") ?? "-"})` },
      ],
    }),
  );
  server.registerTool("roots", { description: "Lists the client's roots" }, async (ctx) => {
    const answered = ctx.mcpReq.inputResponses?.roots as { roots?: { uri: string }[] } | undefined;
    if (!answered) return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
    return { content: [{ type: "text", text: (answered.roots ?? []).map((r) => r.uri).join(" ") }] };
  });
  server.registerTool(
    "admin",
    { description: "Needs the admin scope", scopeChallenge: requireScopes("mcp", "admin") },
    async () => ({ content: [{ type: "text", text: "admin done" }] }),
  );
  return server;
}

export async function startOAuthFixture(): Promise<OAuthFixture> {
  const options: OAuthFixtureOptions = { ...DEFAULTS };
  const clients = new Map<string, { secret?: string; redirectUris: string[] }>();
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; challenge: string; resource: string; scope: string }
  >();
  const issued: Issued[] = [];
  const seen: OAuthFixture["seen"] = {
    registrations: 0,
    authorize: [],
    token: [],
    wellKnown: [],
    refused: 0,
    device: [],
    polls: 0,
  };
  const devices = new Map<string, { clientId: string; scope: string; resource: string; answers: string[] }>();
  const handler = createMcpHandler(() => mcpServer());
  let origin = "";
  let mcpUrl = "";

  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      const t = issued.find((i) => i.token === token);
      if (!t || t.revoked) throw new OAuthError(OAuthErrorCode.InvalidToken, "unknown or revoked token");
      return { token, clientId: t.clientId, scopes: t.scopes, expiresAt: t.exp, resource: new URL(t.aud) };
    },
  };

  function asMetadata() {
    return {
      issuer: origin,
      authorization_endpoint: `${origin}/authorize`,
      token_endpoint: `${origin}/token`,
      ...(options.registration ? { registration_endpoint: `${origin}/register` } : {}),
      response_types_supported: ["code"],
      grant_types_supported: [
        "authorization_code",
        "refresh_token",
        ...(options.device ? ["urn:ietf:params:oauth:grant-type:device_code"] : []),
      ],
      ...(options.device ? { device_authorization_endpoint: `${origin}/device` } : {}),
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      scopes_supported: ["mcp", "admin"],
      ...(options.cimd ? { client_id_metadata_document_supported: true } : {}),
      ...(options.asMeta === "oidc"
        ? {
            jwks_uri: `${origin}/jwks`,
            subject_types_supported: ["public"],
            id_token_signing_alg_values_supported: ["RS256"],
          }
        : {}),
    };
  }

  function prmDocument() {
    return {
      resource: options.resource ?? mcpUrl,
      authorization_servers: [origin],
      scopes_supported: ["mcp"],
    };
  }

  function issue(clientId: string, scope: string, resource: string): Issued {
    const t: Issued = {
      token: randomBytes(16).toString("hex"),
      refresh: randomBytes(16).toString("hex"),
      clientId,
      scopes: scope.split(" ").filter(Boolean),
      aud: options.audience ?? resource,
      exp: Math.floor(Date.now() / 1000) + options.expiresIn,
      revoked: false,
    };
    issued.push(t);
    return t;
  }

  function tokenAnswer(t: Issued) {
    return {
      access_token: t.token,
      token_type: "Bearer",
      expires_in: options.expiresIn,
      refresh_token: t.refresh,
      scope: t.scopes.join(" "),
    };
  }

  /** The client a token request names, checked against its secret when it has one. */
  function clientOf(params: URLSearchParams, authorization: string | undefined): string | undefined {
    let id = params.get("client_id") ?? undefined;
    let secret = params.get("client_secret") ?? undefined;
    if (authorization?.startsWith("Basic ")) {
      const [u, p] = Buffer.from(authorization.slice(6), "base64").toString().split(":");
      id = decodeURIComponent(u ?? "");
      secret = decodeURIComponent(p ?? "");
    }
    if (id === undefined) return undefined;
    const known = clients.get(id);
    if (!known && !(options.cimd && id.startsWith("https://"))) return undefined;
    if (known?.secret !== undefined && known.secret !== secret) return undefined;
    return id;
  }

  async function route(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    const url = new URL(req.url ?? "/", origin);
    const path = url.pathname;
    if (path.startsWith("/.well-known/") || path === "/meta/prm") seen.wellKnown.push(path);
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    // protected resource metadata, where this run of the fixture publishes it
    if (
      (path === "/meta/prm" && options.prm === "header") ||
      (path === "/.well-known/oauth-protected-resource/mcp" && options.prm === "path") ||
      (path === "/.well-known/oauth-protected-resource" && options.prm === "root")
    )
      return send(200, prmDocument());
    if (
      (path === "/.well-known/oauth-authorization-server" && options.asMeta === "oauth") ||
      (path === "/.well-known/openid-configuration" && options.asMeta === "oidc")
    )
      return send(200, asMetadata());
    if (path === "/register" && req.method === "POST" && options.registration) {
      seen.registrations++;
      const meta = JSON.parse(body.toString() || "{}") as { redirect_uris?: string[] };
      const id = `dyn-${randomBytes(6).toString("hex")}`;
      clients.set(id, { redirectUris: meta.redirect_uris ?? [] });
      return send(201, { ...meta, client_id: id, client_id_issued_at: Math.floor(Date.now() / 1000) });
    }
    if (path === "/device" && req.method === "POST" && options.device) {
      const params = new URLSearchParams(body.toString());
      const authorization = req.headers.authorization;
      seen.device.push({ params, ...(authorization ? { authorization } : {}) });
      const clientId = clientOf(params, authorization);
      if (!clientId) return send(401, { error: "invalid_client" });
      const code = randomBytes(12).toString("hex");
      devices.set(code, {
        clientId,
        scope: params.get("scope") ?? "mcp",
        resource: params.get("resource") ?? "",
        answers: [...options.deviceAnswers],
      });
      return send(200, {
        device_code: code,
        user_code: "WDJB-MJHT",
        verification_uri: `${origin}/activate`,
        verification_uri_complete: `${origin}/activate?user_code=WDJB-MJHT`,
        expires_in: options.deviceExpiresIn,
        ...(options.deviceInterval !== undefined ? { interval: options.deviceInterval } : {}),
        ...options.deviceOverride,
      });
    }
    if (path === "/authorize") {
      const p = url.searchParams;
      seen.authorize.push(p);
      const id = p.get("client_id") ?? "";
      const client = clients.get(id);
      const redirect = p.get("redirect_uri") ?? "";
      const known = client
        ? client.redirectUris.includes(redirect)
        : options.cimd && id.startsWith("https://");
      if (!known)
        return send(400, { error: "invalid_request", error_description: "unknown client or redirect" });
      if (p.get("code_challenge_method") !== "S256" || !p.get("code_challenge"))
        return send(400, { error: "invalid_request", error_description: "PKCE S256 required" });
      // a browser (it asks for html) is shown a consent page first, as a person would be; Approve posts back here
      if (p.get("consent") !== "yes" && (req.headers.accept ?? "").includes("text/html")) {
        const back = new URL(url);
        back.searchParams.set("consent", "yes");
        const action = `${back.pathname}${back.search}`.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        return void res.end(
          `<!doctype html><title>Test authorization server</title><h1>Allow byteseek?</h1><form method="post" action="${action}"><button id="approve">Approve</button></form>`,
        );
      }
      const code = randomBytes(12).toString("hex");
      codes.set(code, {
        clientId: id,
        redirectUri: redirect,
        challenge: p.get("code_challenge") ?? "",
        resource: p.get("resource") ?? "",
        scope: p.get("scope") ?? "mcp",
      });
      const back = new URL(redirect);
      back.searchParams.set("code", code);
      if (p.get("state") !== null) back.searchParams.set("state", p.get("state") ?? "");
      res.writeHead(302, { location: back.href });
      return void res.end();
    }
    if (path === "/token" && req.method === "POST") {
      const params = new URLSearchParams(body.toString());
      const authorization = req.headers.authorization;
      seen.token.push({ params, ...(authorization ? { authorization } : {}) });
      const clientId = clientOf(params, authorization);
      if (!clientId) return send(401, { error: "invalid_client" });
      if (params.get("grant_type") === "authorization_code") {
        const c = codes.get(params.get("code") ?? "");
        codes.delete(params.get("code") ?? "");
        const verifierHash = createHash("sha256")
          .update(params.get("code_verifier") ?? "")
          .digest("base64url");
        if (
          !c ||
          c.clientId !== clientId ||
          c.redirectUri !== params.get("redirect_uri") ||
          verifierHash !== c.challenge
        )
          return send(400, { error: "invalid_grant" });
        return send(200, tokenAnswer(issue(clientId, c.scope, params.get("resource") ?? c.resource)));
      }
      if (params.get("grant_type") === "refresh_token") {
        const old = issued.find((i) => i.refresh === params.get("refresh_token"));
        if (!old || old.revoked || old.clientId !== clientId) return send(400, { error: "invalid_grant" });
        old.revoked = true;
        return send(200, tokenAnswer(issue(clientId, old.scopes.join(" "), old.aud)));
      }
      if (params.get("grant_type") === "urn:ietf:params:oauth:grant-type:device_code") {
        seen.polls++;
        const d = devices.get(params.get("device_code") ?? "");
        if (!d || d.clientId !== clientId) return send(400, { error: "invalid_grant" });
        const answer = d.answers.shift();
        if (answer !== undefined) return send(400, { error: answer });
        devices.delete(params.get("device_code") ?? "");
        return send(200, tokenAnswer(issue(clientId, d.scope, params.get("resource") ?? d.resource)));
      }
      return send(400, { error: "unsupported_grant_type" });
    }
    if (path === "/mcp") {
      const request = new Request(url, {
        method: req.method ?? "GET",
        headers: toHeaders(req),
        ...(req.method === "POST" ? { body: new Uint8Array(body) } : {}),
      });
      const gate = requireBearerAuth({
        verifier,
        expectedResource: new URL(mcpUrl),
        ...(options.prm === "header" ? { resourceMetadataUrl: `${origin}/meta/prm` } : {}),
      });
      const auth = await gate(request);
      if (auth instanceof Response) {
        seen.refused++;
        return pipe(auth, res);
      }
      return pipe(await handler.fetch(request, { authInfo: auth }), res);
    }
    send(404, { error: "not_found" });
  }

  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      route(req, res, Buffer.concat(chunks)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  mcpUrl = `${origin}/mcp`;

  return {
    origin,
    url: mcpUrl,
    options,
    clients,
    issued,
    seen,
    async approve(authorizationUrl) {
      const res = await fetch(authorizationUrl, { redirect: "manual" });
      const location = res.headers.get("location");
      if (res.status !== 302 || !location)
        throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
      return location;
    },
    expireAll() {
      for (const t of issued) t.exp = Math.floor(Date.now() / 1000) - 10;
    },
    revokeAll() {
      for (const t of issued) t.revoked = true;
    },
    reset(next = {}) {
      Object.assign(options, DEFAULTS);
      delete options.resource;
      delete options.audience;
      delete options.deviceInterval;
      delete options.deviceOverride;
      options.deviceAnswers = [];
      Object.assign(options, next);
      seen.registrations = 0;
      seen.authorize.length = 0;
      seen.token.length = 0;
      seen.wellKnown.length = 0;
      seen.refused = 0;
      seen.device.length = 0;
      seen.polls = 0;
    },
    async close() {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

export function toHeaders(req: IncomingMessage): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string") h.set(k, v);
    else if (Array.isArray(v)) for (const x of v) h.append(k, x);
  }
  return h;
}

export async function pipe(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

/** What a sign-in test file shares: one authorization server, one MCP harness, the server registered last. */
export interface SignInSuite {
  readonly fx: OAuthFixture;
  readonly h: McpHarness;
  /** The name the last `register` gave (a fresh one per test: the fixture and harness serve the whole file). */
  readonly server: string;
  /**
   * Resets the fixture (`fixture` over the suite's defaults) and registers a new server
   * `<prefix><n>` at its MCP URL with `oauth: {}` and `extra`; answers its name.
   */
  register(fixture?: Partial<OAuthFixtureOptions>, extra?: Record<string, unknown>): Promise<string>;
  /** The last registered server's entry as stored, and its sign-in session. */
  entry(): Promise<Record<string, unknown>>;
  session(): Promise<Record<string, unknown>>;
  /** byteseek's HTTP app over the harness (not listening), its owner token `t0ken`; the caller closes it. */
  app(): Promise<App>;
}

/** The headers of a request with the owner token of `SignInSuite.app`. */
export const APP_AUTH = { authorization: "Bearer t0ken" };

/**
 * One authorization server and one MCP harness for a test file (beforeAll/afterAll), the harness's
 * runs granted every power and `net` to the fixture's host; read them from the tests.
 */
export function useSignInSuite(prefix: string, defaults: Partial<OAuthFixtureOptions> = {}): SignInSuite {
  let fx: OAuthFixture | undefined;
  let h: McpHarness | undefined;
  let n = 0;
  let server = "";
  beforeAll(async () => {
    fx = await startOAuthFixture();
    h = await mcpHarness();
    await grantEverything(h.tree, [new URL(fx.origin).host]);
  });
  afterAll(async () => {
    await h?.dispose();
    await fx?.close();
  });
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error("the sign-in suite starts in beforeAll: use it from the tests");
    return v;
  };
  const suite: SignInSuite = {
    get fx() {
      return started(fx);
    },
    get h() {
      return started(h);
    },
    get server() {
      return server;
    },
    async register(fixture = {}, extra = {}) {
      suite.fx.reset({ ...defaults, ...fixture });
      server = `${prefix}${++n}`;
      await suite.h.register(server, { url: suite.fx.url, oauth: {}, ...extra });
      return server;
    },
    async entry() {
      const node = await suite.h.tree.get(`/byteseek/mcp/${server}`);
      return node?.kind === "json" ? (node.value.value as Record<string, unknown>) : {};
    },
    async session() {
      const oauth = (await suite.entry()).oauth as { session?: Record<string, unknown> } | undefined;
      return oauth?.session ?? {};
    },
    app() {
      const { tree, runtime, mcp } = suite.h;
      return buildApp({ tree, logger: silent, runtime, mcp, web: false, token: "t0ken" });
    },
  };
  return suite;
}
