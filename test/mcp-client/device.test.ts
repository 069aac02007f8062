import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DevicePrompt, signInWithDevice } from "../../tools/mcp/oauth/device.js";
import { refreshIfDue } from "../../tools/mcp/oauth/sign-in.js";
import { maskSecrets } from "../../tools/mcp/secret-fields.js";
import { cliEnv } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { tempDir } from "../tools/helpers.js";
import { until } from "./helpers.js";
import { APP_AUTH, useSignInSuite } from "./oauth-fixture.js";

const suite = useSignInSuite("dev", { device: true });

/** A device sign-in whose waits are recorded, not slept: the test asserts what it would wait, never a time. */
function device(extra: { signal?: AbortSignal; onWait?: (ms: number) => void } = {}) {
  const waits: number[] = [];
  const shown: DevicePrompt[] = [];
  const done = signInWithDevice(suite.h.tree, suite.server, {
    show: (p) => void shown.push(p),
    async sleep(ms, signal) {
      waits.push(ms);
      extra.onWait?.(ms);
      if (signal?.aborted) throw signal.reason;
    },
    ...(extra.signal ? { signal: extra.signal } : {}),
  });
  return { done, waits, shown };
}

describe("device-code sign-in (RFC 8628) to an HTTP MCP server", () => {
  beforeEach(() => suite.fx.reset());

  it("shows the verification URI and user code, polls at the server's interval, slows down when told, and keeps the tokens as the code flow does", async () => {
    await suite.register({
      deviceInterval: 2,
      deviceAnswers: ["authorization_pending", "slow_down", "authorization_pending"],
    });
    const { done, waits, shown } = device();
    const out = await done;
    expect(shown).toEqual([
      {
        verificationUri: `${suite.fx.origin}/activate`,
        verificationUriComplete: `${suite.fx.origin}/activate?user_code=WDJB-MJHT`,
        userCode: "WDJB-MJHT",
        expiresAt: expect.any(Number),
      },
    ]);
    // interval 2 s; slow_down adds 5 s for this poll and every later one
    expect(waits).toEqual([2000, 2000, 7000, 7000]);
    expect(suite.fx.seen.polls).toBe(4);
    // a client registered for the device grant, the resource indicator on both requests
    expect(suite.fx.seen.registrations).toBe(1);
    const [asked] = suite.fx.seen.device;
    expect(asked?.params.get("resource")).toBe(suite.fx.url);
    expect(asked?.params.get("scope")).toBe("mcp");
    expect(out.scope).toBe("mcp");
    expect(out.expiresAt).toBeGreaterThan(Date.now());
    const s = await suite.session();
    const token = suite.fx.issued.at(-1)?.token ?? "none";
    expect((s.tokens as { access_token?: string }).access_token).toBe(token);
    expect((s.client as { grant_types?: string[] }).grant_types).toContain(
      "urn:ietf:params:oauth:grant-type:device_code",
    );
    // a secret field: runs and exports see it masked
    const read = await suite.h.runtime.call(
      "tree.get",
      { key: `/byteseek/mcp/${suite.server}` },
      { vid: "r1" },
    );
    expect(read.text).not.toContain(token);
    const node = await suite.h.tree.get(`/byteseek/mcp/${suite.server}`);
    expect(
      JSON.stringify(
        maskSecrets(`/byteseek/mcp/${suite.server}`, node?.kind === "json" ? node.value.value : null),
      ),
    ).not.toContain(token);
    // the server takes the token (its audience is this server), and the sign-in refreshes like a code flow's
    const [report] = await suite.h.mcp.sync(suite.server);
    expect(report?.ok, report?.error).toBe(true);
    const r = await suite.h.runtime.call(`${suite.server}.echo`, { message: "hi" }, { vid: "r1" });
    expect(r.text).toBe("echo: hi (scopes mcp)");
    expect(await refreshIfDue(suite.h.tree, suite.server, { now: Date.now() + 3600_000 })).toBe(true);
    expect((await suite.session()).tokens).not.toEqual(s.tokens);
    const [status] = (await suite.h.mcp.list()).filter((x) => x.server === suite.server);
    expect(status?.auth).toMatchObject({ state: "signed-in", refreshable: true });
  });

  it("waits 5 s between polls when the server names no interval, and at least 1 s when it names 0", async () => {
    await suite.register();
    const first = device();
    await first.done;
    expect(first.waits).toEqual([5000]);
    await suite.register({ deviceInterval: 0, deviceAnswers: ["authorization_pending"] });
    const second = device();
    await second.done;
    expect(second.waits).toEqual([1000, 1000]);
  });

  it("ends on access_denied and on expired_token, saving no token", async () => {
    await suite.register({ deviceInterval: 1, deviceAnswers: ["authorization_pending", "access_denied"] });
    await expect(device().done).rejects.toThrow(/refused at the authorization server \(access_denied\)/);
    expect((await suite.session()).tokens).toBeUndefined();
    await suite.register({ deviceInterval: 1, deviceAnswers: ["expired_token"] });
    await expect(device().done).rejects.toThrow(/the code expired before anyone approved it/);
    expect((await suite.session()).tokens).toBeUndefined();
  });

  it("stops polling at expires_in when nobody approves (a server answering pending forever)", async () => {
    await suite.register({
      deviceInterval: 5,
      deviceExpiresIn: 30,
      deviceAnswers: Array(1000).fill("authorization_pending"),
    });
    await expect(device().done).rejects.toThrow(/nobody approved the code WDJB-MJHT .* in time/);
    expect(suite.fx.seen.polls).toBe(6);
  });

  it("stops at once when the person cancels (the signal aborts), with no poll after", async () => {
    await suite.register({ deviceInterval: 1, deviceAnswers: Array(1000).fill("authorization_pending") });
    const stop = new AbortController();
    let waits = 0;
    const run = device({ signal: stop.signal, onWait: () => void (++waits === 3 && stop.abort()) });
    await expect(run.done).rejects.toMatchObject({ code: "aborted" });
    expect(suite.fx.seen.polls).toBe(2);
  });

  it("refuses what it would show a person from a hostile server: control characters in the code, a non-http URI", async () => {
    await suite.register({ deviceOverride: { user_code: "\u001b]8;;http://evil\u0007CODE" } });
    await expect(device().done).rejects.toThrow(/byteseek does not show: user_code/);
    await suite.register({ deviceOverride: { verification_uri: "javascript:alert(1)" } });
    await expect(device().done).rejects.toThrow(/verification_uri: an https URL/);
    await suite.register({ deviceOverride: { verification_uri: "http://evil.example/activate" } });
    await expect(device().done).rejects.toThrow(/verification_uri/);
    expect(suite.fx.seen.polls).toBe(0);
    expect((await suite.session()).tokens).toBeUndefined();
  });

  it("refuses metadata naming another resource before asking for a code (the token would be another audience's)", async () => {
    await suite.register({ resource: "http://127.0.0.1:1/other" });
    await expect(device().done).rejects.toThrow(/does not match/);
    expect(suite.fx.seen.device).toHaveLength(0);
  });

  it("a token given for another audience is refused by the server: the sync says to sign in again", async () => {
    await suite.register({ audience: "http://127.0.0.1:1/other" });
    await device().done;
    const [report] = await suite.h.mcp.sync(suite.server);
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain("needs a person to sign in");
  });

  it("says to use --paste where the authorization server offers no device endpoint", async () => {
    await suite.register({ device: false });
    await expect(device().done).rejects.toThrow(/offers no device sign-in.*--paste/);
  });

  it("uses a pre-registered client's secret at the device and token endpoints (no registration)", async () => {
    suite.fx.clients.set("pre-dev", { secret: "s3cret", redirectUris: [] });
    await suite.register({ deviceInterval: 1 }, { oauth: { clientId: "pre-dev", clientSecret: "s3cret" } });
    await device().done;
    expect(suite.fx.seen.registrations).toBe(0);
    expect(suite.fx.seen.device[0]?.authorization).toMatch(/^Basic /);
    expect(suite.fx.issued.at(-1)?.clientId).toBe("pre-dev");
  });
});

describe("the page's Sign in with a code, through the server", () => {
  it("POST /v1/mcp/<server>/login {device: true} answers the code (never the device code), polls in the background until approved, and syncs; a sign-out stops a poll under way", async () => {
    const app = await suite.app();
    const auth = APP_AUTH;
    const login = () =>
      app.inject({
        method: "POST",
        url: `/v1/mcp/${suite.server}/login`,
        headers: auth,
        payload: { device: true },
      });
    try {
      await suite.register({ deviceInterval: 1, deviceAnswers: ["authorization_pending"] });
      const started = await login();
      expect(started.statusCode, started.body).toBe(200);
      expect(started.json()).toEqual({
        verificationUri: `${suite.fx.origin}/activate`,
        verificationUriComplete: `${suite.fx.origin}/activate?user_code=WDJB-MJHT`,
        userCode: "WDJB-MJHT",
        expiresAt: expect.any(Number),
      });
      expect(started.body).not.toContain("device_code");
      await until(async () => (await suite.h.mcp.list()).find((x) => x.server === suite.server)?.tools === 3);
      expect(suite.fx.seen.polls).toBe(2);
      const [status] = (await suite.h.mcp.list()).filter((x) => x.server === suite.server);
      expect(status?.auth?.state).toBe("signed-in");

      // pending forever: a sign-out ends the poll, and nothing polls after it
      await suite.register({ deviceInterval: 1, deviceAnswers: Array(1000).fill("authorization_pending") });
      expect((await login()).statusCode).toBe(200);
      await until(() => suite.fx.seen.polls >= 1);
      const out = await app.inject({
        method: "POST",
        url: `/v1/mcp/${suite.server}/logout`,
        headers: auth,
        payload: {},
      });
      expect(out.statusCode).toBe(200);
      const polled = suite.fx.seen.polls;
      await new Promise((r) => setTimeout(r, 1500));
      expect(suite.fx.seen.polls).toBe(polled);

      // an authorization server without the device grant: a 400 saying what to do
      await suite.register({ device: false });
      const refused = await login();
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: "MCP_SIGN_IN" } });
      expect(refused.body).toContain("offers no device sign-in");
    } finally {
      await app.close();
    }
  });
});

describe("kvspace mcp login --device", () => {
  let dir: { path: string; remove(): Promise<void> };
  beforeAll(async () => {
    dir = await tempDir("byteseek-device-cli-");
  });
  afterAll(() => dir.remove());

  it("prints where to go and the code (with -o json as a line of its own), waits for the approval, and syncs", async () => {
    const env = cliEnv(dir.path);
    suite.fx.reset({ device: true, deviceInterval: 1 });
    const add = await runInProcess(["mcp", "add", "devcli", "--url", suite.fx.url], { env });
    expect(add.stdout).toBe(`devcli\tregistered\t${suite.fx.url}\n`);
    const login = await runInProcess(["mcp", "login", "devcli", "--device"], { env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`go to ${suite.fx.origin}/activate and enter the code WDJB-MJHT`);
    expect(login.stdout).toMatch(/^devcli\tsigned in \(scopes mcp\), token valid until /m);
    expect(login.stdout).toContain("devcli\tsynced\t3 tools");
    // -q -o json: the code reaches a script as stdout's first line, the result as its second
    const json = await runInProcess(["mcp", "login", "devcli", "--device", "-q", "-o", "json"], { env });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toBe("");
    const lines = json.stdout.split("\n").filter(Boolean);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      {
        server: "devcli",
        verificationUri: `${suite.fx.origin}/activate`,
        verificationUriComplete: `${suite.fx.origin}/activate?user_code=WDJB-MJHT`,
        userCode: "WDJB-MJHT",
        expiresAt: expect.any(Number),
      },
      expect.objectContaining({
        server: "devcli",
        signedIn: true,
        sync: expect.objectContaining({ ok: true }),
      }),
    ]);
    const both = await runInProcess(["mcp", "login", "devcli", "--device", "--paste"], { env });
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain("--device or --paste");
  });
});
