import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { PendingApproval } from "../../tools/approval-flow.js";
import { json } from "../../tree/index.js";
import {
  ensureWebBuilt,
  launchBrowser,
  openPage,
  removeDir,
  screenshot,
  startServer,
  type TestServer,
} from "./harness.js";

// A real browser on a shared machine: generous limits; every wait is for a condition.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

let chromium: Awaited<ReturnType<typeof launchBrowser>>;
let browser: Browser;
let server: TestServer;

beforeAll(async () => {
  await ensureWebBuilt();
  chromium = await launchBrowser();
  browser = chromium.browser;
  server = await startServer({ tools: true });
  // A person makes tree.get ask first.
  const node = await server.tree.get("/byteseek/tools/tree.get");
  const decl = node && "value" in node ? (node.value.value as Record<string, unknown>) : {};
  await server.tree.set("/byteseek/tools/tree.get", json({ ...decl, confirm: true } as never));
  await server.tree.set("/notes/today", json({ text: "hello from the tree" }));
});

afterAll(async () => {
  await chromium?.close();
  await server?.close();
  if (server) await removeDir(server.dir);
});

describe("approvals on the web page", () => {
  it("shows a call that starts waiting, live, and runs it when the person clicks Approve", async () => {
    const { page, context, errors } = await openPage(browser, server.url);
    await page.goto("/ui/");
    await page.locator("#live[data-state='live']").waitFor();
    expect(await page.locator("#approvals").isHidden()).toBe(true);

    const runtime = server.runtime!;
    let noticed: (p: PendingApproval) => void = () => undefined;
    const pending = new Promise<PendingApproval>((res) => {
      noticed = res;
    });
    const call = runtime.call(
      "tree.get",
      { key: "/notes/today" },
      { vid: "web1", waitForApproval: true, onApproval: noticed },
    );
    const { key } = await pending;
    const card = page.locator(`article[data-approval="${key}"]`);
    await card.waitFor();
    expect(await card.locator("h3").textContent()).toBe("tree.get wants to run");
    expect(await card.locator("pre.args").textContent()).toContain('"key": "/notes/today"');
    await screenshot(page, "approval-pending");
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    const result = await call;
    expect(result.kind).toBe("ok");
    expect(result.text).toContain("hello from the tree");
    await page.locator("#approvals").waitFor({ state: "hidden" });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("Deny refuses the call: it answers denied and nothing is read", async () => {
    const { page, context } = await openPage(browser, server.url);
    await page.goto("/ui/");
    await page.locator("#live[data-state='live']").waitFor();
    const call = server.runtime!.call(
      "tree.get",
      { key: "/notes/today" },
      { vid: "web2", waitForApproval: true },
    );
    const card = page.locator('article[data-approval="/byteseek/approval/web2/0"]');
    await card.waitFor();
    await card.getByRole("button", { name: "Deny" }).click();
    const result = await call;
    expect(result.kind).toBe("denied");
    expect(result.text).not.toContain("hello from the tree");
    await context.close();
  });
});
