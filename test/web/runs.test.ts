import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { leaseKey } from "../../agent/lease.js";
import { sessionDir, statusKey } from "../../agent/run-keys.js";
import { recordsDir } from "../../tools/records/records.js";
import type { ExportEntry } from "../../tree/index.js";
import { type Json, json, str } from "../../tree/value.js";
import { useAgentPage } from "./agent-page.js";
import { docsShot, requireConfirm, useBrowser } from "./harness.js";

const browser = useBrowser();
const BULK = 1000;
const agent = useAgentPage("byteseek-web-runs-", {
  async setup({ tree }) {
    await requireConfirm(tree, "edit.write");
    await tree.import(bulkRuns());
  },
});

/** Script errors; the console's notes of a 404 or 409 answer are the page's expected reads. */
function pageErrors(errors: string[]): string[] {
  return errors.filter(
    (e) => !/Failed to load resource: the server responded with a status of (404|409)/.test(e),
  );
}

/** `bulk-0001` … `bulk-1000`: a status each (every third interrupted), every tenth called shell.run. */
function bulkRuns(): ExportEntry[] {
  const statuses = ["done", "failed", "interrupted"];
  return Array.from({ length: BULK }, (_, i) => {
    const vid = `bulk-${String(i + 1).padStart(4, "0")}`;
    const tools: Record<string, Json> = { "edit.read": { calls: 1, ms: 1, kinds: { ok: 1 } } };
    if ((i + 1) % 10 === 0) tools["shell.run"] = { calls: 1, ms: 5, kinds: { ok: 1 } };
    return [
      { key: statusKey(vid), kind: "char/utf8", value: statuses[i % 3] as string, vid },
      {
        key: `/byteseek/usage/${vid}`,
        kind: "json",
        value: { calls: Object.keys(tools).length, steps: 2, tokens: { input: 100 + i, output: 10 }, tools },
        vid,
      },
    ] satisfies ExportEntry[];
  }).flat();
}

/** What a process killed mid-turn leaves: a question, the model's calls, a finished read, a started command. */
async function interruptedRun(vid: string): Promise<void> {
  // written by hand (its records' args are not its calls'): no replay of it is exact
  agent.runs.exempt(vid);
  await agent.tree.append(sessionDir(vid), json({ role: "user", content: "read and log" }), { vid });
  await agent.tree.append(
    sessionDir(vid),
    json({
      role: "assistant",
      text: "",
      toolCalls: [
        { id: "c1", name: "edit.read", argsText: '{"path":"notes.txt"}' },
        { id: "c2", name: "shell.run", argsText: '{"command":"echo ran >> ran.log"}' },
      ],
    }),
    { vid },
  );
  const record = (id: string, name: string, done: boolean) =>
    json({
      name,
      args: {},
      kind: done ? "ok" : "runtime",
      isError: !done,
      text: done ? "the notes" : "started",
      details: {},
      ts: Date.now(),
      ms: 0,
      state: done ? "done" : "started",
      origin: { message: 1, id },
      ...(done ? {} : { sideEffect: "other" }),
    });
  await agent.tree.append(recordsDir(vid), record("c1", "edit.read", true), { vid, ro: true });
  await agent.tree.append(recordsDir(vid), record("c2", "shell.run", false), { vid, ro: true });
  await agent.tree.set(statusKey(vid), str("interrupted"), { vid });
}

describe("the runs list", () => {
  it("shows 1,000 runs newest first, a page of 50 at a time, filtered by status, id and tool", async () => {
    const { page, context, errors } = await browser.open(agent.url, { width: 1100, height: 700 });
    await page.goto("/ui/");
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    await page.waitForURL("**/runs/");
    const rows = page.locator("table.runs tbody tr");
    await page.locator("#runs-summary", { hasText: "Runs 1–50 (more on the next page)" }).waitFor();
    expect(await rows.count()).toBe(50);
    // the run made last leads, and the next page goes on from there
    expect(await rows.evaluateAll((trs) => trs.slice(0, 3).map((tr) => tr.getAttribute("data-run")))).toEqual(
      ["bulk-1000", "bulk-0999", "bulk-0998"],
    );
    // a row says the run, its status, when it started, its steps, calls and tokens, and its tools
    expect(await rows.first().locator("td").allTextContents()).toEqual([
      "bulk-1000",
      expect.stringContaining("done"),
      expect.any(String),
      "2",
      "2",
      "1099 / 10",
      "edit.read, shell.run",
    ]);
    await page.locator("#runs-next").click();
    await page.locator("#runs-summary", { hasText: "Runs 51–100" }).waitFor();
    expect(await rows.first().getAttribute("data-run")).toBe("bulk-0950");
    await page.locator("#runs-prev").click();
    await page.locator("#runs-summary", { hasText: "Runs 1–50" }).waitFor();

    await page.locator("#runs-status").selectOption("interrupted");
    // the filtered list has replaced the whole one (bulk-0999 is on both: wait for it first)
    await page.locator('table.runs tbody tr:first-child[data-run="bulk-0999"]').waitFor();
    expect(await rows.first().getAttribute("data-run")).toBe("bulk-0999");
    const statuses = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-status")));
    expect(statuses).toHaveLength(50);
    expect(new Set(statuses)).toEqual(new Set(["interrupted"]));
    await page.locator("#runs-status").selectOption("");

    await page.locator("#runs-vid").fill("bulk-099");
    await page.locator("#runs-summary", { hasText: /^Runs 1–10$/ }).waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run")))).toEqual(
      Array.from({ length: 10 }, (_, i) => `bulk-099${9 - i}`),
    );
    await page.locator("#runs-tool").fill("shell");
    await page.locator("#runs-summary", { hasText: /^Runs 1–1$/ }).waitFor();
    expect(new URL(page.url()).search).toBe("?vid=bulk-099&tool=shell");
    expect(await rows.first().getAttribute("data-run")).toBe("bulk-0990");
    expect(await rows.first().locator("td.tools-cell").textContent()).toBe("edit.read, shell.run");
    await page.locator("#runs-vid").fill("");
    await page.locator("#runs-summary", { hasText: "Runs 1–50 (more on the next page)" }).waitFor();
    expect(await rows.nth(1).getAttribute("data-run")).toBe("bulk-0990");
    await page.locator("#runs-tool").fill("");
    await page.locator('table.runs tbody tr[data-run="bulk-0999"]').waitFor();
    // only the page on screen is in the DOM
    expect(await page.locator("table.runs tr").count()).toBeLessThanOrEqual(51);
    await docsShot(page, "runs");
    // the filters are in the address: a link opens the list filtered
    await page.goto("/runs/?status=failed&vid=bulk-00");
    await page.locator("#runs-summary", { hasText: /^Runs 1–33$/ }).waitFor();
    expect(await rows.first().getAttribute("data-run")).toBe("bulk-0098");
    expect(await page.locator("#runs-status").inputValue()).toBe("failed");
    expect(pageErrors(errors)).toEqual([]);
    await context.close();
  });
});

describe("the runs list's keys", () => {
  it("move through all 1,000 runs, not only the page on screen: ↓ past its last row reads the next page, PageUp back, End the last run, Home the newest, Enter opens it", async () => {
    const { page, context, errors } = await browser.open(agent.url, { width: 1100, height: 700 });
    await page.goto("/runs/");
    const summary = page.locator("#runs-summary");
    await summary.filter({ hasText: "Runs 1–50 (more on the next page)" }).waitFor();
    const rows = page.locator("table.runs tbody tr");
    /** Waits for run `vid`'s row to hold the focus. */
    const focusOn = (vid: string) => page.locator(`table.runs tbody tr[data-run="${vid}"]:focus`).waitFor();
    await rows.first().focus();
    await focusOn("bulk-1000");
    for (let i = 0; i < 49; i++) await page.keyboard.press("ArrowDown");
    await focusOn("bulk-0951");
    // past the last row of the page: the next page, its first row
    await page.keyboard.press("ArrowDown");
    await focusOn("bulk-0950");
    expect(await summary.textContent()).toMatch(/^Runs 51–100/);
    expect(await rows.count()).toBe(50);
    await page.keyboard.press("PageDown");
    await focusOn("bulk-0940");
    await page.keyboard.press("PageUp");
    await focusOn("bulk-0950");
    await page.keyboard.press("PageUp");
    await focusOn("bulk-0960");
    expect(await summary.textContent()).toMatch(/^Runs 1–50/);
    await page.keyboard.press("End");
    await focusOn("bulk-0001");
    expect(await summary.textContent()).toBe("Runs 951–1000");
    await page.keyboard.press("ArrowUp");
    await focusOn("bulk-0002");
    await page.keyboard.press("Home");
    await focusOn("bulk-1000");
    await page.keyboard.press("Enter");
    await page.waitForURL("**/runs/bulk-1000");
    expect(pageErrors(errors)).toEqual([]);
    await context.close();
  });
});

describe("a run's page", () => {
  it("follows an agent run live from start to approval to result, then replays it into a new run", async () => {
    const { page, context, errors } = await browser.open(agent.url, { width: 1100, height: 900 });
    await page.goto("/runs/live-1");
    await page.locator("#run-status", { hasText: "There is no run live-1" }).waitFor();
    agent.fake.script(
      { text: "Writing.", toolCalls: [{ name: "edit.write", args: { path: "live.txt", text: "hi\n" } }] },
      { text: "Wrote live.txt." },
    );
    const turn = fetch(`${agent.url}/v1/agent/turn`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ vid: "live-1", input: "write live.txt" }),
    });
    await page
      .locator('#run-status[data-status="running"]', { hasText: "waiting for a person's approval" })
      .waitFor();
    expect(await page.locator("dl.run-meta").textContent()).toContain("/byteseek/approval/live-1/");
    await page.locator(".approvals button.primary").click();
    await page.locator('#run-status[data-status="done"]').waitFor();
    expect((await turn).status).toBe(200);
    await page.locator('tr[data-record="0"][data-kind="ok"]').waitFor();
    const meta = await page.locator("dl.run-meta").textContent();
    expect(meta).toContain("fake-1");
    expect(meta).toContain("grants.default");
    expect(meta).toMatch(/Steps\s*2/);
    expect(await page.locator('tr[data-record="0"] td a').first().getAttribute("href")).toBe(
      "/ui/byteseek/tool/live-1/0",
    );

    // Replay: a new run, nothing executed, compared with this one at once
    const asked = agent.fake.requests.length;
    await page.locator("#run-replay").click();
    await page.locator('#run-action-result [data-outcome="same"]').waitFor();
    expect(await page.locator("#run-replay-link").textContent()).toBe("live-1.replay-1");
    expect(await page.locator("#run-action-result").textContent()).toContain("0 executed, 0 model requests");
    await page.locator('#run-diff-result [data-identical="true"]').waitFor();
    expect(agent.fake.requests.length).toBe(asked);
    await docsShot(page, "run");
    await page.locator("#run-replay-link").click();
    await page.waitForURL("**/runs/live-1.replay-1");
    await page.locator("dl.run-meta", { hasText: "Replay of" }).waitFor();
    expect(await page.locator("dl.run-meta").textContent()).toContain("step for step the same");
    expect(pageErrors(errors)).toEqual([]);
    await context.close();
  });

  it("resumes an interrupted run, saying what became of each call, and says why a resume is refused", async () => {
    await interruptedRun("int-1");
    await interruptedRun("int-2");
    // another live process holds int-2 (this test's parent: alive, on this host)
    await agent.tree.set(
      leaseKey("int-2"),
      json({ host: hostname(), pid: process.ppid, id: "someone-else", expires: Date.now() + 60_000 }),
    );
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/runs/int-1");
    await page.locator('#run-status[data-status="interrupted"]').waitFor();
    agent.fake.script({ text: "All settled." });
    await page.locator("#run-resume").click();
    await page.locator('#run-action-result [data-outcome="resumed"]').waitFor();
    expect(await page.locator('li[data-decision="recorded"]').textContent()).toContain("edit.read");
    expect(await page.locator('li[data-decision="unknown"]').textContent()).toMatch(
      /shell\.run \(c2\) was not run again: whether it took effect is unknown/,
    );
    await page.locator('#run-status[data-status="done"]').waitFor();
    expect(await page.locator("#run-resume").isDisabled()).toBe(true);

    // compare with the run of the previous test: they part at the first thing the model was asked
    await page.locator("#run-diff summary").click();
    await page.locator("#run-diff-other").fill("live-1");
    await page.getByRole("button", { name: "Compare" }).click();
    await page.locator('#run-diff-result [data-kind="prompt"]').waitFor();
    expect(await page.locator("#run-diff-result").textContent()).toMatch(/^Step 1 \(turn 1, step 1\)/);

    await page.goto("/runs/int-2");
    await page.locator('#run-status[data-status="interrupted"]').waitFor();
    await page.locator("#run-resume").click();
    const refused = page.locator('#run-action-result .error[data-code="AGENT_RUN_BUSY"]');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/^Another process is running this run: /);
    expect(pageErrors(errors)).toEqual([]);
    await context.close();
  });
});
