import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json } from "../../tree/index.js";
import { everythingStdio, newTag, TEST_INSTALL, taggedProcesses } from "../mcp-client/helpers.js";
import { type OAuthFixture, startOAuthFixture } from "../mcp-client/oauth-fixture.js";
import {
  ARTIFACTS,
  callAwaitingApproval,
  removeDir,
  screenshot,
  startServer,
  type TestServer,
  useBrowser,
} from "./harness.js";

const ASKING = resolve(import.meta.dirname, "..", "fixtures", "mcp-asking-server.mjs");

// A real browser, launched once for the file (harness.ts).
const browser = useBrowser();

afterAll(async () => {
  console.log(`web e2e (mcp): screenshots in ${ARTIFACTS}`);
});

describe("the MCP servers on the tools page", () => {
  let server: TestServer;
  const tag = newTag();
  beforeAll(async () => {
    server = await startServer({ tools: true, mcp: true });
    await server.tree.set("/byteseek/mcp/everything", json(everythingStdio(tag) as never));
    await server.tree.set(
      "/byteseek/mcp/broken",
      json({ command: [process.execPath, "-e", "process.exit(4)"] }),
    );
  });
  afterAll(async () => {
    await server?.close();
    expect(await taggedProcesses(tag)).toEqual([]);
    if (server) await removeDir(server.dir);
  });

  it("shows the registry with each server's state, syncs on a click, and lists its tools among the tools", async () => {
    const { page, context } = await browser.open(server.url);
    await page.goto("/tools/");
    const everything = page.locator('#mcp-servers li[data-server="everything"]');
    await everything.waitFor();
    expect(await everything.locator('[data-role="count"]').textContent()).toBe("0 tools");
    await everything.locator('button[data-sync="everything"]').click();
    // the sync writes the tools: the page follows the tree and shows them, the server running
    await page.locator('#mcp-servers li[data-server="everything"][data-state="running"]').waitFor();
    await everything.locator('a[data-mcp-tool="everything.echo"]').waitFor();
    expect(await everything.locator('[data-role="count"]').textContent()).toBe("16 tools");
    await page.locator('#tool-list li[data-tool="everything.get-sum"][data-status="enabled"]').waitFor();
    expect(await page.locator('#tool-list li[data-tool="everything.get-sum"]').textContent()).toContain(
      "mcp",
    );

    const broken = page.locator('#mcp-servers li[data-server="broken"]');
    await broken.locator('button[data-sync="broken"]').click();
    await page.locator('#mcp-servers li[data-server="broken"][data-state="failed"]').waitFor();
    expect(await broken.locator(".problems").textContent()).toContain("could not start");
    await screenshot(page, "mcp-servers");
    await context.close();
  });

  it("puts an upstream's question to the person as a card with its form: Accept sends what they typed back to the upstream", async () => {
    await server.tree.set(
      "/byteseek/mcp/askio",
      json({ command: [process.execPath, ASKING], readOnlyPaths: TEST_INSTALL } as never),
    );
    const [report] = (await server.mcp?.sync("askio")) ?? [];
    expect(report?.ok, report?.error).toBe(true);
    const { page, context, errors } = await browser.openLive(server.url);
    const { pending, call } = callAwaitingApproval(
      server.runtime!,
      "askio.ask",
      { why: "Who is reviewing?" },
      "webask1",
    );
    const { key } = await pending;
    const card = page.locator(`article[data-approval="${key}"]`);
    await card.waitFor();
    expect(await card.locator("p.question").textContent()).toBe("Who is reviewing?");
    await card.getByLabel(/^name/).fill("Ada");
    await card.getByRole("button", { name: "Accept" }).click();
    const result = await call;
    expect(result.kind, result.text).toBe("ok");
    expect(result.text).toContain('action=accept content={"name":"Ada"');
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows a registry entry's secret fields masked, names kept, until the person reveals them", async () => {
    const { page, context } = await browser.open(server.url);
    await page.goto("/ui/byteseek/mcp/everything");
    const input = page.locator("#value-input");
    await input.waitFor();
    const masked = await input.inputValue();
    expect(masked).toContain('"BYTESEEK_TEST_TAG": "***"');
    expect(masked).not.toContain(tag);
    expect(await page.locator("#save").isDisabled()).toBe(true);
    await page.locator("#reveal-secrets").click();
    await page.locator("#reveal-secrets").waitFor({ state: "detached" });
    expect(await input.inputValue()).toContain(tag);
    expect(await page.locator("#save").isDisabled()).toBe(false);
    // the directory's previews mask them too
    await page.goto("/ui/byteseek/mcp/");
    await page.locator("td.value-cell").first().waitFor();
    expect(await page.locator("table").first().textContent()).not.toContain(tag);
    await context.close();
  });
});

describe("Sign in on the MCP view, with the authorization server on another site", () => {
  let server: TestServer;
  let fx: OAuthFixture;
  const TOKEN = "s1gn-in-t0ken";
  beforeAll(async () => {
    // the authorization server on 127.0.0.1, byteseek reached as localhost: another site, so the
    // browser comes back without the page's SameSite=Strict cookie, as it does from a real one
    fx = await startOAuthFixture();
    server = await startServer({ tools: true, mcp: true, token: TOKEN });
    await server.tree.set("/byteseek/mcp/hosted", json({ url: fx.url, oauth: {} }));
  });
  afterAll(async () => {
    await server?.close();
    await fx?.close();
    if (server) await removeDir(server.dir);
  });

  it("goes to the authorization server, comes back to byteseek's callback signed in, and keeps the token out of the page", async () => {
    const base = server.url.replace("127.0.0.1", "localhost");
    const { page, context, errors } = await browser.open(base);
    await page.goto(`/tools/?token=${TOKEN}`);
    const hosted = page.locator('#mcp-servers li[data-server="hosted"]');
    await hosted.locator('button[data-sync="hosted"]').click();
    await hosted.locator('[data-role="auth"][data-auth="needs-sign-in"]').waitFor();

    await hosted.locator('button[data-sign-in="hosted"]').click();
    // the authorization server's own page, on its own origin
    await page.locator("#approve").waitFor();
    expect(new URL(page.url()).origin).toBe(fx.origin);
    const asked = new URL(page.url()).searchParams;
    expect(asked.get("redirect_uri")).toBe(`${base}/v1/mcp/oauth/callback`);
    expect(asked.get("code_challenge_method")).toBe("S256");
    expect(asked.get("resource")).toBe(fx.url);
    await page.locator("#approve").click();
    // back on byteseek's callback, which finished the sign-in without the page's cookie
    await page.getByText("Signed in to hosted (3 tools synced).").waitFor();
    expect(new URL(page.url()).origin).toBe(base);
    await page.getByRole("link", { name: "Back to the tools page" }).click();
    await hosted.locator('[data-role="auth"][data-auth="signed-in"]').waitFor();
    expect(await hosted.locator('[data-role="count"]').textContent()).toBe("3 tools");
    expect(await hosted.locator('[data-role="auth"]').textContent()).toContain("renewed before then");

    // the token is a secret field: kept in the entry, masked on the page and absent from the status
    const token = fx.issued.at(-1)?.token ?? "none";
    const stored = await server.tree.get("/byteseek/mcp/hosted");
    expect(JSON.stringify(stored?.kind === "json" ? stored.value.value : null)).toContain(token);
    const status = await page.evaluate<string>(`fetch("/v1/mcp").then((r) => r.text())`);
    expect(status).toContain('"signed-in"');
    expect(status).not.toContain(token);
    await page.goto("/ui/byteseek/mcp/hosted");
    const input = page.locator("#value-input");
    await input.waitFor();
    expect(await input.inputValue()).toContain('"session": "***"');
    expect(await input.inputValue()).not.toContain(token);
    // the authorization server's site cannot read the entry with the person's browser
    await page.goto(`${fx.origin}/activate`);
    const fromThere = await page.evaluate<string>(
      `fetch(${JSON.stringify(`${base}/v1/tree/byteseek/mcp/hosted`)}, { credentials: "include" }).then((r) => r.text(), (e) => "blocked: " + e)`,
    );
    expect(fromThere).toMatch(/^blocked: TypeError/);
    expect(errors.filter((e) => !/401|404|CORS|ERR_FAILED/.test(e))).toEqual([]);
    await context.close();
  });

  it("signs in with a code for another device: shows the code and where to enter it, and the server signed in once approved", async () => {
    fx.reset({ device: true, deviceInterval: 1, deviceAnswers: ["authorization_pending"] });
    await server.tree.set("/byteseek/mcp/coded", json({ url: fx.url, oauth: {} }));
    const { page, context, errors } = await browser.open(server.url);
    await page.goto(`/tools/?token=${TOKEN}`);
    const coded = page.locator('#mcp-servers li[data-server="coded"]');
    await coded.locator('button[data-sync="coded"]').click();
    await coded.locator('[data-auth="needs-sign-in"] button[data-sign-in-device="coded"]').click();
    await coded.locator('[data-user-code="coded"]').waitFor();
    expect(await coded.locator('[data-user-code="coded"]').textContent()).toBe("WDJB-MJHT");
    const link = coded.locator('[data-role="device-code"] a');
    expect(await link.getAttribute("href")).toBe(`${fx.origin}/activate?user_code=WDJB-MJHT`);
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
    // byteseek polls; the person approves elsewhere (the fixture, on its second poll)
    await coded.locator('[data-role="auth"][data-auth="signed-in"]').waitFor();
    await coded.locator('[data-role="count"]', { hasText: "3 tools" }).waitFor();
    expect(await coded.locator('[data-role="device-code"]').count()).toBe(0);
    // as in the test above, a 404 logged to the console is let through (no script error is)
    expect(errors.filter((e) => !/404|401/.test(e))).toEqual([]);
    await context.close();
  });
});
