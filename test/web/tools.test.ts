import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, str } from "../../tree/index.js";
import { ARTIFACTS, removeDir, screenshot, startServer, type TestServer, useBrowser } from "./harness.js";

// A real browser, launched once for the file (harness.ts).
const browser = useBrowser();
const shots: string[] = [];

afterAll(async () => {
  console.log(`web e2e (tools): screenshots in ${ARTIFACTS}:\n  ${shots.join("\n  ")}`);
});

async function shot(page: Page, name: string) {
  shots.push(await screenshot(page, name));
}

describe("tools", () => {
  let tools: TestServer;
  beforeAll(async () => {
    tools = await startServer({ tools: true });
    // A broken declaration (no description, params or impl) and a switched-off one.
    await tools.tree.set("/byteseek/tools/bad.tool", json({ name: "bad.tool" }));
    const get = await tools.tree.get("/byteseek/tools/tree.get");
    const decl = get && "value" in get ? (get.value.value as Record<string, unknown>) : {};
    await tools.tree.set("/byteseek/tools/tree.peek", json({ ...decl, name: "tree.peek", enabled: false }));
  });
  afterAll(async () => {
    await tools?.close();
    if (tools) await removeDir(tools.dir);
  });

  it("lists the declared tools, invalid ones with their problems, and the next system prompt, the workspace in the header", async () => {
    const { page, context } = await browser.open(tools.url);
    await page.goto("/tools/");
    await page.locator("#workspace:not([hidden])").waitFor();
    expect(await page.locator("#workspace").textContent()).toBe(`workspace: ${tools.runtime?.workspace}`);
    await page.locator('li[data-tool="tree.get"][data-status="enabled"]').waitFor();
    await page.locator('li[data-tool="tree.peek"][data-status="disabled"]').waitFor();
    const bad = page.locator('li[data-tool="bad.tool"][data-status="invalid"]');
    await bad.locator(".problems").waitFor();
    expect(await bad.locator(".problems").getAttribute("title")).toMatch(/description/);
    const prompt = page.locator("#prompt-text");
    await prompt.waitFor();
    expect(await prompt.textContent()).toContain("tree.get");
    await shot(page, "tools-panel");
    await context.close();
  });

  it("counts a directory's entries as its listing shows them, its hidden system entries left out", async () => {
    const listed = (await tools.tree.list("/byteseek/tools/")).children.length;
    const node = await tools.tree.get("/byteseek/tools/");
    // the seeder's hidden ‥shipped/ is in the tree's count, not in the listing
    expect(node && "count" in node ? node.count : 0).toBe(listed + 1);
    const { page, context } = await browser.open(tools.url);
    await page.goto("/ui/byteseek/tools/");
    const paneCount = page.locator('#tree-pane a[data-key="/byteseek/tools/"] + .count');
    await paneCount.filter({ hasText: ` ${listed}` }).waitFor();
    await page
      .locator(".dir-meta dl.meta dd", { hasText: new RegExp(`^${listed}$`) })
      .first()
      .waitFor();
    await context.close();
  });

  it("calls a tool through the form generated from its schema and shows its record live", async () => {
    const { page, context } = await browser.open(tools.url);
    await page.goto("/tools/tree.set");
    await page.getByLabel(/^key/).fill("/from-form/greeting");
    await page.getByLabel(/^value/).fill('"hello from the form"');
    await page.locator("#call-vid").fill("webtest");
    await page.getByRole("button", { name: "Call tree.set" }).click();
    await page.locator('#call-result .result[data-kind="ok"]').waitFor();
    await shot(page, "tool-call");
    expect(await tools.tree.get("/from-form/greeting")).toMatchObject({ value: str("hello from the form") });
    const recordKey = await page.locator("#call-record").textContent();
    expect(recordKey).toBe("Record /byteseek/tool/webtest/0");

    // The records table of the run follows new calls as they land.
    await page.getByRole("link", { name: "All records of webtest" }).click();
    await page.waitForURL("**/runs/webtest");
    await page.locator('tr[data-record="0"][data-kind="ok"]').waitFor();
    expect(await page.locator('tr[data-record="0"] td').nth(1).textContent()).toBe("tree.set");
    const res = await fetch(`${tools.url}/v1/tools/tree.get/call`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ args: {}, vid: "webtest" }),
    });
    expect(res.status).toBe(200);
    const failed = page.locator('tr[data-record="1"][data-kind="arg"]');
    await failed.waitFor();
    expect(await failed.locator("td.text-cell pre").first().textContent()).toMatch(/key/);
    await shot(page, "tool-records");
    // The run's next system prompt, as GET /v1/prompt?vid= rebuilds it.
    await page.locator("#run-prompt summary").click();
    await page.locator("#run-prompt-text", { hasText: "tree.get" }).waitFor();
    await context.close();
  });
});
