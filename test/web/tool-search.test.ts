import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describedTool } from "../search/fixtures.js";
import { declare } from "../tools/helpers.js";
import { removeDir, screenshot, startServer, type TestServer, useBrowser } from "./harness.js";

// A real browser, launched once for the file (harness.ts).
const browser = useBrowser();

describe("searching the tools page", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ tools: true });
    await declare(server.tree, describedTool("gh.list_issues", "List the issues of a GitHub repository"));
    await declare(server.tree, describedTool("fx.convert", "Convert an amount between currencies"));
  });
  afterAll(async () => {
    await server?.close();
    if (server) await removeDir(server.dir);
  });

  it("narrows the declared tools to the matches, best first, and shows them all again when cleared", async () => {
    const { page, context } = await browser.open(server.url);
    await page.goto("/tools/");
    await page.locator('#tool-list li[data-tool="edit.read"]').waitFor();
    await page.locator("#tool-search").fill("currency conversion");
    await page.locator('#tool-list li[data-tool="edit.read"]').waitFor({ state: "detached" });
    const shown = await page
      .locator("#tool-list li[data-tool]")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-tool")));
    expect(shown[0]).toBe("fx.convert");
    expect(shown).not.toContain("gh.list_issues");
    await screenshot(page, "tool-search");
    await page.locator("#tool-search").fill("zzyzx");
    await page.getByText('No tool matches "zzyzx".').waitFor();
    await page.locator("#tool-search").fill("");
    await page.locator('#tool-list li[data-tool="gh.list_issues"]').waitFor();
    await page.locator('#tool-list li[data-tool="edit.read"]').waitFor();
    await context.close();
  });
});
