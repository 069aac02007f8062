import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { browserCommand } from "../../cli/open-url.js";
import { beginSignIn, finishSignIn, refreshIfDue, signOut } from "../../tools/mcp/oauth/sign-in.js";
import { maskSecrets } from "../../tools/mcp/secret-fields.js";
import { cliEnv } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { tempDir } from "../tools/helpers.js";
import { until } from "./helpers.js";
import { APP_AUTH, useSignInSuite } from "./oauth-fixture.js";

const REDIRECT = "http://127.0.0.1:9/callback";

const suite = useSignInSuite("prot");

/** A person signs in: the authorization URL is opened, the server redirects, byteseek finishes. */
async function signIn(): Promise<URL> {
  const begun = await beginSignIn(suite.h.tree, suite.server, REDIRECT);
  const back = await suite.fx.approve(begun.authorizationUrl);
  await finishSignIn(suite.h.tree, suite.server, back);
  await suite.h.mcp.sync(suite.server);
  return new URL(begun.authorizationUrl);
}

async function echo(message = "hi") {
  return suite.h.runtime.call(`${suite.server}.echo`, { message }, { vid: "r1" });
}

describe("OAuth sign-in to an HTTP MCP server", () => {
  beforeEach(() => suite.fx.reset());

  it("says a person must sign in (kvspace mcp login) before any token exists, and registers nothing", async () => {
    await suite.register();
    const [report] = await suite.h.mcp.sync(suite.server);
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain(`needs a person to sign in`);
    expect(report?.error).toContain(`kvspace mcp login ${suite.server}`);
    expect(suite.fx.seen.registrations).toBe(0);
    const [status] = (await suite.h.mcp.list()).filter((s) => s.server === suite.server);
    expect(status?.auth?.state).toBe("needs-sign-in");
  });

  it("discovers through the challenge's resource_metadata, registers dynamically, signs in with PKCE S256 and the resource indicator, then calls", async () => {
    await suite.register();
    const auth = await signIn();
    expect(suite.fx.seen.wellKnown).toContain("/meta/prm");
    expect(suite.fx.seen.registrations).toBe(1);
    expect(auth.searchParams.get("code_challenge_method")).toBe("S256");
    expect(auth.searchParams.get("resource")).toBe(suite.fx.url);
    expect(auth.searchParams.get("scope")).toBe("mcp");
    const exchange = suite.fx.seen.token.find((t) => t.params.get("grant_type") === "authorization_code");
    expect(exchange?.params.get("code_verifier")?.length).toBeGreaterThanOrEqual(43);
    expect(exchange?.params.get("resource")).toBe(suite.fx.url);
    const [report] = await suite.h.mcp.sync(suite.server);
    expect(report?.ok, report?.error).toBe(true);
    const r = await echo();
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toBe("echo: hi (scopes mcp)");
    const [status] = (await suite.h.mcp.list()).filter((s) => s.server === suite.server);
    expect(status?.auth).toMatchObject({ state: "signed-in", refreshable: true });
    expect(status?.auth?.expiresAt).toBeGreaterThan(Date.now());
  });

  it("keeps the tokens as a secret field: masked for runs and exports, absent from the status", async () => {
    await suite.register();
    await signIn();
    const value = await suite.entry();
    const token = suite.fx.issued.at(-1)?.token ?? "none";
    expect(JSON.stringify(value)).toContain(token);
    const masked = maskSecrets(`/byteseek/mcp/${suite.server}`, value);
    expect(JSON.stringify(masked)).not.toContain(token);
    expect((masked as { oauth?: unknown }).oauth).toEqual({ session: "***" });
    const read = await suite.h.runtime.call(
      "tree.get",
      { key: `/byteseek/mcp/${suite.server}` },
      { vid: "r1" },
    );
    expect(read.text).not.toContain(token);
    expect(JSON.stringify(await suite.h.mcp.list())).not.toContain(token);
  });

  it("finds the metadata at the path-aware well-known, and the authorization server by OpenID discovery", async () => {
    await suite.register({ prm: "path", asMeta: "oidc" });
    await signIn();
    expect(suite.fx.seen.wellKnown).toContain("/.well-known/oauth-protected-resource/mcp");
    expect(suite.fx.seen.wellKnown).toContain("/.well-known/openid-configuration");
    expect((await echo()).kind).toBe("ok");
  });

  it("falls back to the root well-known when the path-aware one is absent", async () => {
    await suite.register({ prm: "root" });
    await signIn();
    expect(suite.fx.seen.wellKnown).toEqual(
      expect.arrayContaining([
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
      ]),
    );
    expect((await echo()).kind).toBe("ok");
  });

  it("uses a pre-registered client id and secret from the entry (no registration), authenticating at the token endpoint", async () => {
    suite.fx.clients.set("pre-1", { secret: "s3cret", redirectUris: [REDIRECT] });
    await suite.register({ registration: false }, { oauth: { clientId: "pre-1", clientSecret: "s3cret" } });
    const auth = await signIn();
    expect(auth.searchParams.get("client_id")).toBe("pre-1");
    expect(suite.fx.seen.registrations).toBe(0);
    const exchange = suite.fx.seen.token.find((t) => t.params.get("grant_type") === "authorization_code");
    expect(exchange?.authorization ?? exchange?.params.get("client_secret")).toBeTruthy();
    expect((await echo()).kind).toBe("ok");
  });

  it("uses the client ID metadata document's URL as client id where the server accepts one", async () => {
    const doc = "https://byteseek.example/oauth/client.json";
    await suite.register({ cimd: true }, { oauth: { clientMetadataUrl: doc } });
    const auth = await signIn();
    expect(auth.searchParams.get("client_id")).toBe(doc);
    expect(suite.fx.seen.registrations).toBe(0);
    expect((await echo()).kind).toBe("ok");
  });

  it("refuses a redirect whose state is not the sign-in's, and still finishes with the right one", async () => {
    await suite.register();
    const begun = await beginSignIn(suite.h.tree, suite.server, REDIRECT);
    const back = new URL(await suite.fx.approve(begun.authorizationUrl));
    const forged = new URL(back);
    forged.searchParams.set("state", `${suite.server}.forged`);
    await expect(finishSignIn(suite.h.tree, suite.server, forged)).rejects.toThrow(/state is not the one/);
    expect(suite.fx.seen.token).toHaveLength(0);
    await finishSignIn(suite.h.tree, suite.server, back);
    await suite.h.mcp.sync(suite.server);
    expect((await echo()).kind).toBe("ok");
  });

  it("refuses protected resource metadata naming another resource (the token's audience would not be this server)", async () => {
    await suite.register({ resource: "http://127.0.0.1:1/elsewhere" });
    await expect(beginSignIn(suite.h.tree, suite.server, REDIRECT)).rejects.toThrow(/does not match/);
    expect(suite.fx.seen.authorize).toHaveLength(0);
  });

  it("a token given for another audience is refused by the server: the sync fails and says to sign in again", async () => {
    await suite.register({ audience: "http://127.0.0.1:1/other" });
    await signIn();
    const [report] = await suite.h.mcp.sync(suite.server);
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain(
      `needs a person to sign in (it refused byteseek's token, even a refreshed one)`,
    );
    expect(suite.fx.seen.refused).toBeGreaterThan(0);
  });

  it("refreshes a token that expires within a minute before the call, and an expired one after the server's 401", async () => {
    await suite.register({ expiresIn: 30 });
    await signIn();
    const before = suite.fx.issued.length;
    expect(await refreshIfDue(suite.h.tree, suite.server)).toBe(true);
    expect(suite.fx.issued.length).toBe(before + 1);
    expect(suite.fx.seen.token.filter((t) => t.params.get("grant_type") === "refresh_token")).toHaveLength(1);
    suite.fx.options.expiresIn = 3600;
    expect(await refreshIfDue(suite.h.tree, suite.server)).toBe(true); // the 30 s token was due again
    expect(await refreshIfDue(suite.h.tree, suite.server)).toBe(false);
    // the server says the token expired: the connection refreshes once and the call goes through
    await suite.h.mcp.sync(suite.server);
    suite.fx.expireAll();
    const r = await echo();
    expect(r.kind, r.text).toBe("ok");
  });

  it("a revoked sign-in ends in needs sign-in, not in a loop", async () => {
    await suite.register();
    await signIn();
    await suite.h.mcp.sync(suite.server);
    suite.fx.revokeAll();
    const r = await echo();
    expect(r.kind).toBe("runtime");
    expect(r.text).toContain(`kvspace mcp login ${suite.server}`);
    expect((await suite.session()).tokens).toBeUndefined();
    await signIn();
    expect((await echo()).kind).toBe("ok");
  });

  it("steps up on insufficient_scope: the call asks for a sign-in with the scopes the server named, which then works", async () => {
    await suite.register();
    await signIn();
    await suite.h.mcp.sync(suite.server);
    const denied = await suite.h.runtime.call(`${suite.server}.admin`, {}, { vid: "r1" });
    expect(denied.kind).toBe("runtime");
    expect(denied.text).toContain("kvspace mcp login");
    expect((await suite.session()).needScope).toBe("mcp admin");
    const auth = await signIn();
    expect(auth.searchParams.get("scope")).toBe("mcp admin");
    const ok = await suite.h.runtime.call(`${suite.server}.admin`, {}, { vid: "r1" });
    expect(ok.kind, ok.text).toBe("ok");
    expect(ok.text).toBe("admin done");
  });

  it("speaks 2026-07-28 to a server that does, and announces the workspace as its root when asked", async () => {
    await suite.register();
    await signIn();
    const r = await suite.h.runtime.call(`${suite.server}.roots`, {}, { vid: "r1" });
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toBe(pathToFileURL(suite.h.workspace).href);
  });

  it("signs out: tokens forgotten, the next call needs a sign-in", async () => {
    await suite.register();
    await signIn();
    expect(await signOut(suite.h.tree, suite.server)).toBe(true);
    expect((await suite.session()).tokens).toBeUndefined();
    const r = await echo();
    expect(r.kind).toBe("runtime");
  });

  it("never presents tokens once the entry points at another URL", async () => {
    await suite.register();
    await signIn();
    const value = await suite.entry();
    await suite.h.tree.set(
      `/byteseek/mcp/${suite.server}`,
      (await import("../../tree/value.js")).json({
        ...value,
        url: `${suite.fx.origin}/mcp?moved=1`,
      } as never),
    );
    const r = await echo();
    expect(r.kind).toBe("runtime");
    expect(suite.fx.seen.refused).toBeGreaterThan(0);
  });
});

describe("kvspace mcp add | status | login | logout", () => {
  let dir: { path: string; remove(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = await tempDir("byteseek-oauth-cli-");
    // no desktop: the tests play the browser themselves, unless one names its own $BROWSER
    const { BROWSER: _browser, DISPLAY: _display, WAYLAND_DISPLAY: _wayland, ...rest } = cliEnv(dir.path);
    env = rest;
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
    suite.fx.reset();
    const add = await runInProcess(
      [
        "mcp",
        "add",
        "cli1",
        "--url",
        suite.fx.url,
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
    expect(add.stdout).toBe(`cli1\tregistered\t${suite.fx.url}\n`);
    expect(add.code).toBe(1);
    expect(add.stderr).toContain("kvspace mcp login cli1");
    expect(await stored("cli1")).toMatchObject({
      url: suite.fx.url,
      headers: { "X-Team": "blue", "X-Env": "test" },
      oauth: { scope: "mcp" },
      tools: ["echo", "admin"],
    });
    const again = await runInProcess(["mcp", "add", "cli1", "--url", suite.fx.url], { env });
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
    const redirect = suite.fx.seen.authorize.at(-1)?.get("redirect_uri") ?? "";
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const status = await runInProcess(["mcp", "status", "cli1"], { env });
    expect(status.stdout).toMatch(
      /^cli1\t\w+\t2 tools\tnone held\tsigned in until \S+ \(refreshed before then\)\t-\n$/,
    );
    const logout = await runInProcess(["mcp", "logout", "cli1"], { env });
    expect(logout.stdout).toBe("cli1\tsigned out\n");
    // -q -o json: stderr is silenced, so the URL to open reaches the script as stdout's first line
    let again: Promise<Response> | undefined;
    const json = await runInProcess(
      ["mcp", "login", "cli1", "-q", "-o", "json"],
      { env },
      {},
      {
        onStdout(all) {
          const first = all.split("\n")[0] ?? "";
          if (all.includes("\n") && !again)
            again = fetch((JSON.parse(first) as { authorizationUrl: string }).authorizationUrl);
        },
      },
    );
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toBe("");
    const [opened, result, ...rest] = json.stdout.split("\n").filter(Boolean);
    expect(rest).toEqual([]);
    expect(JSON.parse(opened ?? "")).toEqual({
      server: "cli1",
      authorizationUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?/),
    });
    expect(JSON.parse(result ?? "")).toMatchObject({
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
  it("mcp login opens the authorization URL in the desktop's browser ($BROWSER), whose redirect signs in; nothing opens without a desktop", async () => {
    const browser = join(dir.path, "browser.cjs");
    const seen = join(dir.path, "browser-saw");
    // a browser: follows the authorization server's redirect back to the loopback port
    await writeFile(
      browser,
      `#!${process.execPath}\nconst fs = require("node:fs");\nfs.writeFileSync(${JSON.stringify(seen)}, process.argv.slice(2).join(" "));\nfetch(process.argv[2]).then((r) => r.text()).then((t) => fs.appendFileSync(${JSON.stringify(seen)}, "\\n" + t));\n`,
      { mode: 0o755 },
    );
    suite.fx.reset();
    await runInProcess(["mcp", "add", "desk1", "--url", suite.fx.url], { env });
    const login = await runInProcess(["mcp", "login", "desk1"], { env: { ...env, BROWSER: browser } });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain("the browser opens this URL; if it does not, open it in a browser");
    expect(login.stdout).toContain("desk1\tsynced\t3 tools");
    // the browser is its own process: it may still be writing down the page it was shown
    await until(async () => (await readFile(seen, "utf8")).includes("\n"));
    const [argv, page] = (await readFile(seen, "utf8")).split("\n");
    expect(argv).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+$/);
    expect(page).toContain("Signed in to desk1");
    expect(browserCommand({}, "linux")).toBeUndefined();
    expect(browserCommand({ DISPLAY: ":0" }, "linux")).toEqual(["xdg-open"]);
    expect(browserCommand({}, "darwin")).toEqual(["open"]);
    expect(browserCommand({ BROWSER: "/usr/bin/firefox", DISPLAY: ":0" }, "linux")).toEqual([
      "/usr/bin/firefox",
    ]);
  });

  it("mcp login --paste prints the URL, takes the redirect URL pasted on stdin and syncs; a pasted URL with another state is refused before any code is exchanged", async () => {
    suite.fx.reset();
    await runInProcess(["mcp", "add", "paste1", "--url", suite.fx.url], { env });
    /** Runs `mcp login paste1 --paste`, playing the person: approve in a browser, paste (a change of) where it lands. */
    const login = (pasted: (back: URL) => URL) => {
      const stdin = new PassThrough();
      let approving: Promise<void> | undefined;
      return runInProcess(
        ["mcp", "login", "paste1", "--paste"],
        { env },
        {},
        {
          stdin,
          onStdout(all) {
            const url = /http:\/\/\S+\/authorize\S+/.exec(all)?.[0];
            if (!url || approving || !all.includes("paste that page's whole URL")) return;
            approving = suite.fx
              .approve(url)
              .then((back) => void stdin.end(`${pasted(new URL(back)).href}\n`));
          },
        },
      );
    };
    const forged = await login((back) => {
      back.searchParams.set("state", "forged");
      return back;
    });
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toContain(
      `refused: the redirect's state is not the one this sign-in to "paste1" sent`,
    );
    expect(suite.fx.seen.token).toHaveLength(0);
    // the browser was sent to where nothing listens: the URL the person copies from its address bar
    expect(suite.fx.seen.authorize.at(-1)?.get("redirect_uri")).toBe("http://127.0.0.1/callback");
    const pasted = await login((back) => back);
    expect(pasted.code, pasted.stderr).toBe(0);
    expect(pasted.stdout).toMatch(/^paste1\tsigned in \(scopes mcp\), token valid until /m);
    expect(pasted.stdout).toContain("paste1\tsynced\t3 tools");
    expect(suite.fx.seen.token.map((t) => t.params.get("grant_type"))).toEqual(["authorization_code"]);
  });
});

describe("the page's Sign in, through the server", () => {
  it("POST /v1/mcp/<server>/login answers the authorization URL; the callback route finishes it without a token (the state is its credential), refuses a wrong state and a replay, and syncs", async () => {
    await suite.register();
    const app = await suite.app();
    try {
      const auth = APP_AUTH;
      // the redirect URI is made from the Host header: a request naming another site (a DNS rebind)
      // is refused at the server's front door, before any sign-in starts
      const base = await app.listen({ host: "127.0.0.1", port: 0 });
      const foreign = await request(`${base}/v1/mcp/${suite.server}/login`, {
        method: "POST",
        headers: { ...auth, host: "evil.example", "content-type": "application/json" },
        body: "{}",
      });
      expect(foreign.statusCode).toBe(421);
      expect(await foreign.body.text()).not.toContain("authorizationUrl");
      expect((await suite.session()).state).toBeUndefined();
      const started = await app.inject({
        method: "POST",
        url: `/v1/mcp/${suite.server}/login`,
        headers: auth,
        payload: {},
      });
      expect(started.statusCode, started.body).toBe(200);
      const { authorizationUrl } = started.json() as { authorizationUrl: string };
      expect(new URL(authorizationUrl).searchParams.get("redirect_uri")).toMatch(
        /\/v1\/mcp\/oauth\/callback$/,
      );
      const back = new URL(await suite.fx.approve(authorizationUrl));
      const forged = new URL(back);
      forged.searchParams.set("state", `${suite.server}.forged`);
      // the browser comes back from the authorization server's site without the page's SameSite=Strict
      // cookie: the route takes no token, and the state it must match is the credential
      const refused = await app.inject({ method: "GET", url: `${forged.pathname}${forged.search}` });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain("Not signed in: refused");
      expect((await suite.session()).state).toBeDefined();
      const done = await app.inject({ method: "GET", url: `${back.pathname}${back.search}` });
      expect(done.statusCode, done.body).toBe(200);
      expect(done.body).toContain(`Signed in to ${suite.server} (3 tools synced)`);
      // single use: the same redirect again finds no sign-in under way
      const replayed = await app.inject({ method: "GET", url: `${back.pathname}${back.search}` });
      expect(replayed.statusCode).toBe(400);
      expect(replayed.body).toContain("no sign-in");
      const listed = await app.inject({ method: "GET", url: "/v1/mcp", headers: auth });
      const mine = (
        listed.json() as { servers: { server: string; auth?: { state: string } }[] }
      ).servers.find((s) => s.server === suite.server);
      expect(mine?.auth?.state).toBe("signed-in");
      const out = await app.inject({
        method: "POST",
        url: `/v1/mcp/${suite.server}/logout`,
        headers: auth,
        payload: {},
      });
      expect(out.json()).toEqual({ server: suite.server, signedOut: true });
    } finally {
      await app.close();
    }
  });
});
