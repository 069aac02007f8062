import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { json, str } from "../../tree/index.js";
import { useAgentPage } from "./agent-page.js";
import { docsShot, requireConfirm, useBrowser } from "./harness.js";

// A real browser, launched once for the file (harness.ts), against a byteseek with an agent whose
// model is the fake one, on a classic-level store in a temp folder.
const browser = useBrowser();
const agent = useAgentPage("byteseek-web-overview-", {
  env: { BYTESEEK_LLM_MODELS: "fake-1, fake-2" },
  deps: ({ bs, dir }) => ({
    mcp: bs.mcp,
    store: { engine: "classic", location: join(dir.path, "db"), sync: "always" },
  }),
  async setup({ tree }) {
    await requireConfirm(tree, "edit.write");
    // an upstream MCP server a person switched off: registered, never started
    await tree.set("/byteseek/mcp/archive", json({ command: ["true"], enabled: false }));
    // a run that finished before the page opened
    await tree.set("/vthread/r0done/status", str("done"));
  },
});

/** The number a status tile of the runs card shows. */
const tile = (status: string) => `.tiles [data-count="${status}"]`;

describe("the overview, the page's landing view", () => {
  it("opens at / with the runs, approvals, failing tools, MCP servers, store and workspace, and the tree moved to /ui/", async () => {
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/");
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    await page.locator('#live[data-state="live"]').waitFor();
    await page.locator(tile("done")).waitFor();
    expect(await page.locator(tile("done")).textContent()).toBe("1");
    expect(await page.locator(tile("failed")).textContent()).toBe("0");
    expect(await page.locator('#overview-runs tr[data-vid="r0done"] a').getAttribute("href")).toBe(
      "/runs/r0done",
    );
    expect(await page.locator(".approvals-card").textContent()).toContain("Nothing waits for a decision.");
    expect(await page.locator("#overview-failing").textContent()).toContain("No failed calls since");
    const archive = page.locator('#overview-mcp tr[data-server="archive"]');
    await archive.waitFor();
    expect(await archive.locator(".badge").allTextContents()).toEqual(["disabled"]);
    // the store: its revision, its size on disk, and that a write is on disk before it is acknowledged
    const revision = Number(await page.locator('#overview-store [data-field="revision"]').textContent());
    expect(revision).toBeGreaterThanOrEqual(agent.tree.revision() - 1);
    expect(await page.locator('#overview-store [data-field="size"]').textContent()).toMatch(
      /^[0-9.]+ (B|KiB|MiB)$/,
    );
    expect(await page.locator('#overview-store [data-field="durability"]').textContent()).toContain(
      "BYTESEEK_SYNC=always",
    );
    await page.locator('#overview-host [data-field="workspace"] code').waitFor();
    expect(await page.locator('#overview-host [data-field="workspace"]').textContent()).toContain(
      agent.workspace,
    );
    expect(await page.locator('#overview-host [data-field="model"]').textContent()).toBe("openai fake-1");
    // the global approvals panel steps aside here: the overview has its own card
    expect(await page.locator("#approvals").isVisible()).toBe(false);

    // the theme follows the system's: dark colours when it prefers dark
    const colours = () =>
      page.evaluate<string[]>(
        `[document.body, document.querySelector("#overview-runs")].map((e) => getComputedStyle(e).backgroundColor)`,
      );
    const light = await colours();
    await page.emulateMedia({ colorScheme: "dark" });
    const dark = await colours();
    expect(dark).toEqual(["rgb(22, 25, 29)", "rgb(29, 33, 38)"]);
    expect(light).not.toEqual(dark);

    // keyboard: Tab from the top reaches the nav's Overview link, which is the current section
    expect(await page.locator('#top-nav a[data-view="overview"]').getAttribute("aria-current")).toBe("true");
    expect(errors).toEqual([]);
    // a status tile opens the runs list filtered to that status
    await page.locator('.tiles [data-status="done"] a').focus();
    await page.keyboard.press("Enter");
    await page.waitForURL("**/runs/?status=done");
    expect(await page.locator("#runs-status").inputValue()).toBe("done");
    await page.goBack();
    await page.locator(tile("done")).waitFor();
    // a run row is a link that Space follows as Enter does
    await page.locator('#overview-runs tr[data-vid="r0done"] a').focus();
    await page.keyboard.press(" ");
    await page.waitForURL("**/runs/r0done");

    // the tree lives at /ui/, and its old hash links still open it
    await page.goto("/#/vthread/r0done/status");
    await page.waitForURL("**/ui/vthread/r0done/status");
    await page.locator("h1", { hasText: "/vthread/r0done/status" }).waitFor();
    await page.goto("/ui");
    await page.locator("h1", { hasText: "/" }).waitFor();
    await context.close();
  });

  it("follows a run that fails while it is open: the failed count and the failing tool appear, with no reload", async () => {
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/");
    await page.locator('#live[data-state="live"]').waitFor();
    await page.locator(tile("failed")).waitFor();
    const failedBefore = Number(await page.locator(tile("failed")).textContent());
    let navigations = 0;
    page.on("framenavigated", () => navigations++);

    // a run's records, as the loop leaves them when a command fails and the run gives up
    const now = Date.now();
    await agent.tree.set(
      "/byteseek/tool/r1fail/0",
      json({
        name: "shell.run",
        args: { argv: ["make", "tests"] },
        kind: "runtime",
        isError: true,
        text: "exit code 2: make: *** No rule to make target 'tests'\nStop.",
        details: {},
        ts: now,
        ms: 12,
        state: "done",
      }),
      { vid: "r1fail" },
    );
    await agent.tree.set("/vthread/r1fail/status", str("failed"), { vid: "r1fail" });

    await page.locator(tile("failed"), { hasText: String(failedBefore + 1) }).waitFor();
    const row = page.locator('#overview-failing tr[data-tool="shell.run"]');
    await row.waitFor();
    expect(await row.locator("td.num").textContent()).toBe("1 of 1");
    expect(await row.textContent()).toContain("No rule to make target 'tests'");
    expect(await row.locator("a").first().getAttribute("href")).toBe("/tools/shell.run");
    await page.locator('#overview-runs tr[data-vid="r1fail"][data-status="failed"]').waitFor();
    // the revision shown follows the watch
    expect(Number(await page.locator('#overview-store [data-field="revision"]').textContent())).toBe(
      agent.tree.revision(),
    );
    expect(navigations).toBe(0);
    await docsShot(page, "overview");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("decides an approval in one click: the waiting run goes on and the card empties", async () => {
    agent.fake.script(
      {
        toolCalls: [
          { name: "edit.write", args: { path: "from-overview.txt", text: "approved at a glance\n" } },
        ],
      },
      { text: "Written." },
    );
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/");
    await page.locator('#live[data-state="live"]').waitFor();
    const turn = fetch(`${agent.url}/v1/agent/turn`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: "Write from-overview.txt" }),
    });
    const card = page.locator(".approvals-card article.approval");
    await card.waitFor();
    expect(await card.locator("h3").textContent()).toContain("edit.write");
    // the run waiting shows as running, waiting for approval
    await page
      .locator("#overview-runs tr[data-status='running']", { hasText: "waits for approval" })
      .waitFor();
    expect(existsSync(join(agent.workspace, "from-overview.txt"))).toBe(false);

    await card.getByRole("button", { name: "Approve", exact: true }).click();
    const answer = (await (await turn).json()) as { reason: string; text: string };
    expect(answer).toMatchObject({ reason: "done", text: "Written." });
    expect(await readFile(join(agent.workspace, "from-overview.txt"), "utf8")).toBe("approved at a glance\n");
    await page.locator(".approvals-card", { hasText: "Nothing waits for a decision." }).waitFor();
    await page.locator(tile("running"), { hasText: "0" }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});
