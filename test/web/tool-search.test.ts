import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describedTool } from "../search/fixtures.js";
import { declare } from "../tools/helpers.js";
import { bulkTools } from "./bulk-tools.js";
import { docsShot, removeDir, startServer, type TestServer, useBrowser } from "./harness.js";

// A real browser, launched once for the file (harness.ts).
const browser = useBrowser();
const BULK = 5000;

/** The tools the list shows in its rows now (only those drawn). */
const drawn = (page: Page) =>
  page.locator("#tool-list li[data-tool]").evaluateAll((els) => els.map((e) => e.getAttribute("data-tool")));

describe("the tools list at 5,000 tools", () => {
  let server: TestServer;
  let total = 0;
  beforeAll(async () => {
    server = await startServer({ tools: true });
    await declare(server.tree, describedTool("gh.list_issues", "List the issues of a GitHub repository"));
    await declare(server.tree, describedTool("fx.convert", "Convert an amount between currencies"));
    await server.tree.import(bulkTools(BULK));
    total = (await server.runtime!.listTools()).valid.length;
    expect(total).toBeGreaterThan(BULK);
  });
  afterAll(async () => {
    await server?.close();
    if (server) await removeDir(server.dir);
  });

  it("shows every tool as a compact row, drawing only the rows in view, and scrolls to the last", async () => {
    const { page, context, errors } = await browser.open(server.url);
    await page.goto("/tools/");
    await page.locator("#tool-count", { hasText: `${total} tools · ${total} shown` }).waitFor();
    const first = await drawn(page);
    expect(first[0]).toBe("bulk.t0000");
    expect(first.length).toBeGreaterThan(10);
    expect(first.length).toBeLessThan(60);
    await docsShot(page, "tools");
    // the last row, reached by scrolling the list's box
    await page.locator("#tool-list").evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await page.locator('#tool-list li[data-tool="tree.set"]').waitFor();
    expect((await drawn(page)).length).toBeLessThan(60);
    await page.locator('#tool-list li[data-tool="tree.set"] a').click();
    await page.waitForURL("**/tools/tree.set");
    // (this server has no MCP client and no records yet: the page's GETs of those answer 404)
    expect(errors.filter((e) => !e.includes("status of 404"))).toEqual([]);
    await context.close();
  });

  it("moves with the keys through every row, not only those drawn: ↓ past the drawn rows, PageDown, End, Home, and Enter opens the tool", async () => {
    const { page, context, errors } = await browser.open(server.url);
    await page.goto("/tools/");
    await page.locator("#tool-count", { hasText: `${total} tools · ${total} shown` }).waitFor();
    const list = page.locator("#tool-list");
    /** The row aria-activedescendant names: drawn, marked selected, and its tool. */
    const active = async () => {
      const id = await list.getAttribute("aria-activedescendant");
      const row = page.locator(`#tool-list li#${id}`);
      expect(await row.getAttribute("aria-selected")).toBe("true");
      return {
        tool: await row.getAttribute("data-tool"),
        at: Number(await row.getAttribute("aria-posinset")),
      };
    };
    const lastDrawn = (await drawn(page)).at(-1);
    await list.focus();
    expect(await active()).toEqual({ tool: "bulk.t0000", at: 1 });
    for (let i = 0; i < 40; i++) await page.keyboard.press("ArrowDown");
    // row 41: beyond the 28 rows drawn when the list opened (20 in view, 8 below), the box scrolled with it
    expect(await active()).toEqual({ tool: "bulk.t0040", at: 41 });
    expect(lastDrawn).toBe("bulk.t0027");
    expect(await list.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
    await page.keyboard.press("PageDown");
    expect((await active()).at).toBe(41 + 19);
    await page.keyboard.press("End");
    expect(await active()).toEqual({ tool: "tree.set", at: total });
    expect((await drawn(page)).length).toBeLessThan(60);
    await page.keyboard.press("ArrowUp");
    expect((await active()).at).toBe(total - 1);
    await page.keyboard.press("Home");
    expect(await active()).toEqual({ tool: "bulk.t0000", at: 1 });
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.waitForURL("**/tools/bulk.t0001");
    expect(errors.filter((e) => !e.includes("status of 404"))).toEqual([]);
    await context.close();
  });

  it("narrows to the search's matches, best first, filters by kind, owner, MCP server and status, alone, together and with a search", async () => {
    const { page, context } = await browser.open(server.url);
    await page.goto("/tools/");
    await page.locator("#tool-count", { hasText: `${total} tools` }).waitFor();
    await page.locator("#tool-search").fill("currency conversion");
    await page.locator("#tool-count", { hasText: 'for "currency conversion"' }).waitFor();
    expect((await drawn(page))[0]).toBe("fx.convert");
    expect(await drawn(page)).not.toContain("gh.list_issues");
    await page.locator("#tool-search").fill("zzyzx");
    await page.getByText('No tool matches "zzyzx".').waitFor();
    await page.locator("#tool-search").fill("");
    await page.locator("#tool-count", { hasText: `${total} tools · ${total} shown` }).waitFor();

    const shown = async (n: number) => {
      await page
        .locator("#tool-count", { hasText: ` · ${n} shown` })
        .waitFor({ timeout: 5000 })
        .catch(async (err) => {
          throw new Error(`${n}: ${await page.locator("#tool-count").textContent()} ${err}`);
        });
    };
    const bulk = [...Array(BULK).keys()];
    await page.selectOption("#filter-kind", "shell");
    // every fifth bulk tool, and the two described ones
    await shown(bulk.filter((i) => i % 5 === 0).length + 2);
    await page.selectOption("#filter-owner", "run:bulk");
    await shown(bulk.filter((i) => i % 5 === 0 && i % 7 === 0).length);
    expect(await page.locator("#tool-list li[data-tool]").first().getAttribute("data-states")).toContain(
      "not accepted",
    );
    await page.selectOption("#filter-kind", "");
    await page.selectOption("#filter-owner", "person");
    await page.selectOption("#filter-server", "srv1");
    await shown(bulk.filter((i) => i % 5 === 2 && i % 3 === 1 && i % 7 !== 0).length);
    await page.selectOption("#filter-server", "");
    await page.selectOption("#filter-owner", "");
    await page.selectOption("#filter-kind", "http");
    await page.selectOption("#filter-state", "disabled");
    await shown(bulk.filter((i) => i % 5 === 1 && i % 11 === 0).length);
    await page.selectOption("#filter-kind", "llm");
    await page.selectOption("#filter-state", "needs approval");
    await shown(bulk.filter((i) => i % 5 === 4 && i % 13 === 0).length);
    await page.selectOption("#filter-kind", "");
    await page.selectOption("#filter-state", "not accepted");
    await shown(bulk.filter((i) => i % 7 === 0).length);
    // a search narrowed by a filter: the search's best 100 matches, then the filter
    await page.selectOption("#filter-state", "");
    await page.selectOption("#filter-kind", "http");
    await page.locator("#tool-search").fill("weather");
    await page.locator("#tool-count", { hasText: 'for "weather"' }).waitFor();
    const states = await page
      .locator("#tool-list li[data-tool]")
      .evaluateAll((els) => els.map((e) => e.textContent ?? ""));
    expect(states.length).toBeGreaterThan(0);
    for (const row of states) expect(row).toMatch(/http.*weather/);
    await context.close();
  });
});
