import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PolicyInput } from "../../tools/gate/policy.js";
import { json } from "../../tree/index.js";
import { setPolicy } from "../tools/helpers.js";
import {
  callAwaitingApproval,
  removeDir,
  requireConfirm,
  screenshot,
  startServer,
  type TestServer,
  useBrowser,
} from "./harness.js";

// A real browser, launched once for the file (harness.ts).
const browser = useBrowser();
let server: TestServer;

beforeAll(async () => {
  server = await startServer({ tools: true });
  // A person makes tree.get ask first.
  await requireConfirm(server.tree, "tree.get");
  await server.tree.set("/notes/today", json({ text: "hello from the tree" }));
});

afterAll(async () => {
  await server?.close();
  if (server) await removeDir(server.dir);
});

describe("approvals on the web page", () => {
  it("shows a call that starts waiting, live, and runs it when the person clicks Approve", async () => {
    const { page, context, errors } = await browser.openLive(server.url);
    expect(await page.locator("#approvals").isHidden()).toBe(true);

    const { pending, call } = callAwaitingApproval(
      server.runtime!,
      "tree.get",
      { key: "/notes/today" },
      "web1",
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
    const { page, context } = await browser.openLive(server.url);
    const { pending, call } = callAwaitingApproval(
      server.runtime!,
      "tree.get",
      { key: "/notes/today" },
      "web2",
    );
    const card = page.locator(`article[data-approval="${(await pending).key}"]`);
    await card.waitFor();
    await card.getByRole("button", { name: "Deny" }).click();
    const result = await call;
    expect(result.kind).toBe("denied");
    expect(result.text).not.toContain("hello from the tree");
    await context.close();
  });

  it("warns in a banner while the policy turns the sandbox off, and drops it once the sandbox is on again", async () => {
    const policy = await server.tree.get("/byteseek/policy");
    const current = policy?.kind === "json" ? (policy.value.value as Record<string, unknown>) : {};
    await setPolicy(server.tree, { ...current, sandbox: "off" } as PolicyInput);
    const { page, context, errors } = await browser.open(server.url);
    try {
      await page.goto("/ui/");
      const banner = page.locator("#sandbox-banner");
      await banner.waitFor();
      expect(await banner.textContent()).toMatch(
        /Commands run unsandboxed.*remove the setting from \/byteseek\/policy/,
      );
      await setPolicy(server.tree, { ...current, sandbox: "on" } as PolicyInput);
      await banner.waitFor({ state: "hidden" });
      expect(errors).toEqual([]);
    } finally {
      await setPolicy(server.tree, current as PolicyInput);
      await context.close();
    }
  });
});
