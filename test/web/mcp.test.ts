import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json } from "../../tree/index.js";
import { everythingStdio, newTag, taggedProcesses } from "../mcp-client/helpers.js";
import { ARTIFACTS, removeDir, screenshot, startServer, type TestServer, useBrowser } from "./harness.js";

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
