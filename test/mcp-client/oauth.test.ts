import { pathToFileURL } from "node:url";
import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildApp } from "../../server/app.js";
import { beginSignIn, finishSignIn, refreshIfDue, signOut } from "../../tools/mcp/oauth/sign-in.js";
import { maskSecrets } from "../../tools/mcp/secret-fields.js";
import { cliEnv } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { silent, tempDir } from "../tools/helpers.js";
import type { McpHarness } from "./helpers.js";
import { type OAuthFixture, type OAuthFixtureOptions, useSignInSuite } from "./oauth-fixture.js";

const REDIRECT = "http://127.0.0.1:9/callback";

const suite = useSignInSuite();
let fx: OAuthFixture;
let h: McpHarness;
let n = 0;
/** A fresh server name per test: one harness and one fixture serve the whole file. */
let server = "";
beforeAll(() => {
  fx = suite.fx();
  h = suite.h();
});

async function register(extra: Record<string, unknown> = {}, fixture: Partial<OAuthFixtureOptions> = {}) {
  fx.reset(fixture);
  server = `prot${++n}`;
  await h.register(server, { url: fx.url, oauth: {}, ...extra });
}

async function entry(): Promise<Record<string, unknown>> {
  const node = await h.tree.get(`/byteseek/mcp/${server}`);
  return node?.kind === "json" ? (node.value.value as Record<string, unknown>) : {};
}

async function session(): Promise<Record<string, unknown>> {
  return ((await entry()).oauth as { session?: Record<string, unknown> } | undefined)?.session ?? {};
}

/** A person signs in: the authorization URL is opened, the server redirects, byteseek finishes. */
async function signIn(): Promise<URL> {
  const begun = await beginSignIn(h.tree, server, REDIRECT);
  const back = await fx.approve(begun.authorizationUrl);
  await finishSignIn(h.tree, server, back);
  await h.mcp.sync(server);
  return new URL(begun.authorizationUrl);
}

async function echo(message = "hi") {
  return h.runtime.call(`${server}.echo`, { message }, { vid: "r1" });
}

describe("OAuth sign-in to an HTTP MCP server", () => {
  beforeEach(() => fx.reset());

  it("says a person must sign in (kvspace mcp login) before any token exists, and registers nothing", async () => {
    await register();
    const [report] = await h.mcp.sync(server);
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain(`needs a person to sign in`);
    expect(report?.error).toContain(`kvspace mcp login ${server}`);
    expect(fx.seen.registrations).toBe(0);
    const [status] = (await h.mcp.list()).filter((s) => s.server === server);
    expect(status?.auth?.state).toBe("needs-sign-in");
  });

  it("discovers through the challenge's resource_metadata, registers dynamically, signs in with PKCE S256 and the resource indicator, then calls", async () => {
    await register();
    const auth = await signIn();
    expect(fx.seen.wellKnown).toContain("/meta/prm");
    expect(fx.seen.registrations).toBe(1);
    expect(auth.searchParams.get("code_challenge_method")).toBe("S256");
    expect(auth.searchParams.get("resource")).toBe(fx.url);
    expect(auth.searchParams.get("scope")).toBe("mcp");
    const exchange = fx.seen.token.find((t) => t.params.get("grant_type") === "authorization_code");
    expect(exchange?.params.get("code_verifier")?.length).toBeGreaterThanOrEqual(43);
    expect(exchange?.params.get("resource")).toBe(fx.url);
    const [report] = await h.mcp.sync(server);
    expect(report?.ok, report?.error).toBe(true);
    const r = await echo();
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toBe("echo: hi (scopes mcp)");
    const [status] = (await h.mcp.list()).filter((s) => s.server === server);
    expect(status?.auth).toMatchObject({ state: "signed-in", refreshable: true });
    expect(status?.auth?.expiresAt).toBeGreaterThan(Date.now());
  });

  it("keeps the tokens as a secret field: masked for runs and exports, absent from the status", async () => {
    await register();
    await signIn();
    const value = await entry();
    const token = fx.issued.at(-1)?.token ?? "none";
    expect(JSON.stringify(value)).toContain(token);
    const masked = maskSecrets(`/byteseek/mcp/${server}`, value);
    expect(JSON.stringify(masked)).not.toContain(token);
    expect((masked as { oauth?: unknown }).oauth).toEqual({ session: "***" });
    const read = await h.runtime.call("tree.get", { key: `/byteseek/mcp/${server}` }, { vid: "r1" });
    expect(read.text).not.toContain(token);
    expect(JSON.stringify(await h.mcp.list())).not.toContain(token);
  });

  it("finds the metadata at the path-aware well-known, and the authorization server by OpenID discovery", async () => {
    await register({}, { prm: "path", asMeta: "oidc" });
    await signIn();
    expect(fx.seen.wellKnown).toContain("/.well-known/oauth-protected-resource/mcp");
    expect(fx.seen.wellKnown).toContain("/.well-known/openid-configuration");
    expect((await echo()).kind).toBe("ok");
  });

  it("falls back to the root well-known when the path-aware one is absent", async () => {
    await register({}, { prm: "root" });
    await signIn();
    expect(fx.seen.wellKnown).toEqual(
      expect.arrayContaining([
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
      ]),
    );
    expect((await echo()).kind).toBe("ok");
  });

  it("uses a pre-registered client id and secret from the entry (no registration), authenticating at the token endpoint", async () => {
    fx.clients.set("pre-1", { secret: "s3cret", redirectUris: [REDIRECT] });
    await register({ oauth: { clientId: "pre-1", clientSecret: "s3cret" } }, { registration: false });
    const auth = await signIn();
    expect(auth.searchParams.get("client_id")).toBe("pre-1");
    expect(fx.seen.registrations).toBe(0);
    const exchange = fx.seen.token.find((t) => t.params.get("grant_type") === "authorization_code");
    expect(exchange?.authorization ?? exchange?.params.get("client_secret")).toBeTruthy();
    expect((await echo()).kind).toBe("ok");
  });

  it("uses the client ID metadata document's URL as client id where the server accepts one", async () => {
    const doc = "https://byteseek.example/oauth/client.json";
    await register({ oauth: { clientMetadataUrl: doc } }, { cimd: true });
    const auth = await signIn();
    expect(auth.searchParams.get("client_id")).toBe(doc);
    expect(fx.seen.registrations).toBe(0);
    expect((await echo()).kind).toBe("ok");
  });

  it("refuses a redirect whose state is not the sign-in's, and still finishes with the right one", async () => {
    await register();
    const begun = await beginSignIn(h.tree, server, REDIRECT);
    const back = new URL(await fx.approve(begun.authorizationUrl));
    const forged = new URL(back);
    forged.searchParams.set("state", `${server}.forged`);
    await expect(finishSignIn(h.tree, server, forged)).rejects.toThrow(/state is not the one/);
    expect(fx.seen.token).toHaveLength(0);
    await finishSignIn(h.tree, server, back);
    await h.mcp.sync(server);
    expect((await echo()).kind).toBe("ok");
  });

  it("refuses protected resource metadata naming another resource (the token's audience would not be this server)", async () => {
    await register({}, { resource: "http://127.0.0.1:1/elsewhere" });
    await expect(beginSignIn(h.tree, server, REDIRECT)).rejects.toThrow(/does not match/);
    expect(fx.seen.authorize).toHaveLength(0);
  });

  it("a token given for another audience is refused by the server: the sync fails and says to sign in again", async () => {
    await register({}, { audience: "http://127.0.0.1:1/other" });
    await signIn();
    const [report] = await h.mcp.sync(server);
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain(
      `needs a person to sign in (it refused byteseek's token, even a refreshed one)`,
    );
    expect(fx.seen.refused).toBeGreaterThan(0);
  });

  it("refreshes a token that expires within a minute before the call, and an expired one after the server's 401", async () => {
    await register({}, { expiresIn: 30 });
    await signIn();
    const before = fx.issued.length;
    expect(await refreshIfDue(h.tree, server)).toBe(true);
    expect(fx.issued.length).toBe(before + 1);
    expect(fx.seen.token.filter((t) => t.params.get("grant_type") === "refresh_token")).toHaveLength(1);
    fx.options.expiresIn = 3600;
    expect(await refreshIfDue(h.tree, server)).toBe(true); // the 30 s token was due again
    expect(await refreshIfDue(h.tree, server)).toBe(false);
    // the server says the token expired: the connection refreshes once and the call goes through
    await h.mcp.sync(server);
    fx.expireAll();
    const r = await echo();
    expect(r.kind, r.text).toBe("ok");
  });

  it("a revoked sign-in ends in needs sign-in, not in a loop", async () => {
    await register();
    await signIn();
    await h.mcp.sync(server);
    fx.revokeAll();
    const r = await echo();
    expect(r.kind).toBe("runtime");
    expect(r.text).toContain(`kvspace mcp login ${server}`);
    expect((await session()).tokens).toBeUndefined();
    await signIn();
    expect((await echo()).kind).toBe("ok");
  });

  it("steps up on insufficient_scope: the call asks for a sign-in with the scopes the server named, which then works", async () => {
    await register();
    await signIn();
    await h.mcp.sync(server);
    const denied = await h.runtime.call(`${server}.admin`, {}, { vid: "r1" });
    expect(denied.kind).toBe("runtime");
    expect(denied.text).toContain("kvspace mcp login");
    expect((await session()).needScope).toBe("mcp admin");
    const auth = await signIn();
    expect(auth.searchParams.get("scope")).toBe("mcp admin");
    const ok = await h.runtime.call(`${server}.admin`, {}, { vid: "r1" });
    expect(ok.kind, ok.text).toBe("ok");
    expect(ok.text).toBe("admin done");
  });

  it("speaks 2026-07-28 to a server that does, and announces the workspace as its root when asked", async () => {
    await register();
    await signIn();
    const r = await h.runtime.call(`${server}.roots`, {}, { vid: "r1" });
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toBe(pathToFileURL(h.workspace).href);
  });

  it("signs out: tokens forgotten, the next call needs a sign-in", async () => {
    await register();
    await signIn();
    expect(await signOut(h.tree, server)).toBe(true);
    expect((await session()).tokens).toBeUndefined();
    const r = await echo();
    expect(r.kind).toBe("runtime");
  });

  it("never presents tokens once the entry points at another URL", async () => {
    await register();
    await signIn();
    const value = await entry();
    await h.tree.set(
      `/byteseek/mcp/${server}`,
      (await import("../../tree/value.js")).json({ ...value, url: `${fx.origin}/mcp?moved=1` } as never),
    );
    const r = await echo();
    expect(r.kind).toBe("runtime");
    expect(fx.seen.refused).toBeGreaterThan(0);
  });
});

describe("kvspace mcp add | status | login | logout", () => {
  let dir: { path: string; remove(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = await tempDir("byteseek-oauth-cli-");
    env = cliEnv(dir.path);
  });
  afterAll(() => dir.remove());

  /** The registry entry as `kvspace export --secrets` writes it. */
  async function stored(name: string): Promise<unknown> {
    const out = await runInProcess(["export", "/byteseek/mcp/", "--secrets"], { env });
    const line = out.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { key: string; value?: unknown })
      .find((e) => e.key === `/byteseek/mcp/${name}`);
    return line?.value;
  }

  it("mcp add registers an HTTP server (headers, scope, allow-list) or a command; mcp status says it needs a sign-in", async () => {
    fx.reset();
    const add = await runInProcess(
      [
        "mcp",
        "add",
        "cli1",
        "--url",
        fx.url,
        "--header",
        "X-Team: blue",
        "--header",
        "X-Env: test",
        "--scope",
        "mcp",
        "--allow",
        "echo,admin",
      ],
      { env },
    );
    expect(add.stdout).toBe(`cli1\tregistered\t${fx.url}\n`);
    expect(add.code).toBe(1);
    expect(add.stderr).toContain("kvspace mcp login cli1");
    expect(await stored("cli1")).toMatchObject({
      url: fx.url,
      headers: { "X-Team": "blue", "X-Env": "test" },
      oauth: { scope: "mcp" },
      tools: ["echo", "admin"],
    });
    const again = await runInProcess(["mcp", "add", "cli1", "--url", fx.url], { env });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain("--force");
    const cmd = await runInProcess(
      ["mcp", "add", "cmd1", "--env", "A=1", "--", process.execPath, "-e", "process.exit(3)"],
      { env },
    );
    expect(cmd.stdout).toBe(`cmd1\tregistered\t${process.execPath} -e process.exit(3)\n`);
    expect(await stored("cmd1")).toEqual({
      command: [process.execPath, "-e", "process.exit(3)"],
      env: { A: "1" },
    });
    const status = await runInProcess(["mcp", "status", "cli1"], { env });
    expect(status.stdout).toMatch(/^cli1\t\w+\t0 tools\tnone held\tneeds sign-in: kvspace mcp login cli1\t/);
  });

  it("mcp login prints the authorization URL, takes the redirect on a loopback port and syncs; mcp logout forgets the tokens", async () => {
    let browser: Promise<Response> | undefined;
    const login = await runInProcess(
      ["mcp", "login", "cli1"],
      { env },
      {},
      {
        onStdout(all) {
          const url = /http:\/\/\S+\/authorize\S+/.exec(all)?.[0];
          // the browser follows the authorization server's redirect to the loopback port
          if (url && !browser) browser = fetch(url);
        },
      },
    );
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toMatch(/^cli1\tsigned in \(scopes mcp\), token valid until /m);
    expect(login.stdout).toContain("cli1\tsynced\t2 tools");
    expect(await (await browser)?.text()).toContain("Signed in to cli1");
    const redirect = fx.seen.authorize.at(-1)?.get("redirect_uri") ?? "";
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const status = await runInProcess(["mcp", "status", "cli1"], { env });
    expect(status.stdout).toMatch(
      /^cli1\t\w+\t2 tools\tnone held\tsigned in until \S+ \(refreshed before then\)\t-\n$/,
    );
    const logout = await runInProcess(["mcp", "logout", "cli1"], { env });
    expect(logout.stdout).toBe("cli1\tsigned out\n");
    // -o json: one document on stdout, the URL to open for the person on stderr
    let again: Promise<Response> | undefined;
    const json = await runInProcess(
      ["mcp", "login", "cli1", "-o", "json"],
      { env },
      {},
      {
        onStderr(all) {
          const url = /http:\/\/\S+\/authorize\S+/.exec(all)?.[0];
          if (url && !again) again = fetch(url);
        },
      },
    );
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      server: "cli1",
      signedIn: true,
      scope: "mcp",
      expiresAt: expect.any(Number),
      sync: { server: "cli1", ok: true, tools: 2 },
    });
    await again;
    const out = await runInProcess(["mcp", "logout", "cli1", "-o", "json"], { env });
    expect(JSON.parse(out.stdout)).toEqual({ server: "cli1", signedOut: true });
  });
});

describe("the page's Sign in, through the server", () => {
  it("POST /v1/mcp/<server>/login answers the authorization URL; the callback route finishes it without a token (the state is its credential), refuses a wrong state and a replay, and syncs", async () => {
    await register();
    const app = await buildApp({
      tree: h.tree,
      logger: silent,
      runtime: h.runtime,
      mcp: h.mcp,
      web: false,
      token: "t0ken",
    });
    try {
      const auth = { authorization: "Bearer t0ken" };
      // the redirect URI is made from the Host header: a request naming another site (a DNS rebind)
      // is refused at the server's front door, before any sign-in starts
      const base = await app.listen({ host: "127.0.0.1", port: 0 });
      const foreign = await request(`${base}/v1/mcp/${server}/login`, {
        method: "POST",
        headers: { ...auth, host: "evil.example", "content-type": "application/json" },
        body: "{}",
      });
      expect(foreign.statusCode).toBe(421);
      expect(await foreign.body.text()).not.toContain("authorizationUrl");
      expect((await session()).state).toBeUndefined();
      const started = await app.inject({
        method: "POST",
        url: `/v1/mcp/${server}/login`,
        headers: auth,
        payload: {},
      });
      expect(started.statusCode, started.body).toBe(200);
      const { authorizationUrl } = started.json() as { authorizationUrl: string };
      expect(new URL(authorizationUrl).searchParams.get("redirect_uri")).toMatch(
        /\/v1\/mcp\/oauth\/callback$/,
      );
      const back = new URL(await fx.approve(authorizationUrl));
      const forged = new URL(back);
      forged.searchParams.set("state", `${server}.forged`);
      // the browser comes back from the authorization server's site without the page's SameSite=Strict
      // cookie: the route takes no token, and the state it must match is the credential
      const refused = await app.inject({ method: "GET", url: `${forged.pathname}${forged.search}` });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain("Not signed in: refused");
      expect((await session()).state).toBeDefined();
      const done = await app.inject({ method: "GET", url: `${back.pathname}${back.search}` });
      expect(done.statusCode, done.body).toBe(200);
      expect(done.body).toContain(`Signed in to ${server} (3 tools synced)`);
      // single use: the same redirect again finds no sign-in under way
      const replayed = await app.inject({ method: "GET", url: `${back.pathname}${back.search}` });
      expect(replayed.statusCode).toBe(400);
      expect(replayed.body).toContain("no sign-in");
      const listed = await app.inject({ method: "GET", url: "/v1/mcp", headers: auth });
      const mine = (
        listed.json() as { servers: { server: string; auth?: { state: string } }[] }
      ).servers.find((s) => s.server === server);
      expect(mine?.auth?.state).toBe("signed-in");
      const out = await app.inject({
        method: "POST",
        url: `/v1/mcp/${server}/logout`,
        headers: auth,
        payload: {},
      });
      expect(out.json()).toEqual({ server, signedOut: true });
    } finally {
      await app.close();
    }
  });
});
