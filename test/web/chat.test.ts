import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createByteseek } from "../../compose/byteseek.js";
import { buildApp } from "../../server/app.js";
import { webRoutes } from "../../server/web.js";
import { json, openTree } from "../../tree/index.js";
import { TEST_INSTALL } from "../mcp-client/helpers.js";
import { silent } from "../tools/helpers.js";
import { useAgentPage } from "./agent-page.js";
import { docsShot, requireConfirm, screenshot, useBrowser } from "./harness.js";

const ASKING = resolve(import.meta.dirname, "..", "fixtures", "mcp-asking-server.mjs");

// A real browser, launched once for the file (harness.ts).
const browser = useBrowser();
const agent = useAgentPage("byteseek-web-chat-", {
  env: { BYTESEEK_LLM_MODELS: "fake-1,fake-2" },
  // A person makes edit.write ask first.
  setup: ({ tree }) => requireConfirm(tree, "edit.write"),
});

describe("the agent on the web page", () => {
  it("runs a turn: the answer streams in, each tool call shows its arguments and result, then the totals", async () => {
    await writeFile(join(agent.workspace, "notes.txt"), "hello from the workspace\n");
    agent.fake.script(
      { text: "Let me read it.", toolCalls: [{ name: "edit.read", args: { path: "notes.txt" } }] },
      { text: "The file says hello." },
    );
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/ui/");
    await page.getByRole("link", { name: "Agent" }).click();
    await page.getByLabel("Message").fill("What does notes.txt say?");
    await page.getByLabel("Message").press("Enter");

    const call = page.locator('li.tool-call[data-tool="edit.read"][data-state="ok"]');
    await call.waitFor();
    expect(await call.locator("pre.args").textContent()).toContain('"path": "notes.txt"');
    expect(await call.locator("pre.result").textContent()).toContain("hello from the workspace");
    expect(await call.locator(".kind").textContent()).toMatch(/^ok · \d+(\.\d)? m?s$/);
    await page.locator(".chat-log .summary").waitFor();
    const said = await page.locator(".chat-log .msg.assistant").allTextContents();
    expect(said).toEqual(["Let me read it.", "The file says hello."]);
    expect(await page.locator(".chat-log .msg.user").textContent()).toBe("What does notes.txt say?");
    expect(await page.locator(".chat-log .summary").textContent()).toMatch(
      /^2 steps · 1 tool call · \d+ tokens in, \d+ out$/,
    );
    // the run goes on at its own address; its id is the one the records are under
    expect(new URL(page.url()).pathname).toMatch(/^\/agent\/r[0-9a-z]+$/);
    const vid = decodeURIComponent(new URL(page.url()).pathname.slice("/agent/".length));
    expect(await call.locator("a.record").textContent()).toBe(`/byteseek/tool/${vid}/0`);

    // the next message continues the same run: the model sees the whole conversation
    agent.fake.script({ text: "Still hello." });
    await page.getByLabel("Message").fill("And now?");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".chat-log .summary").nth(1).waitFor();
    expect(agent.fake.requests.at(-1)?.messages.length).toBe(5);
    await screenshot(page, "agent-chat");

    // the run's address opens on its conversation, read back from the tree
    await page.reload();
    await page.locator('.chat-log li.tool-call[data-tool="edit.read"][data-state="ok"]').waitFor();
    expect(await page.locator(".chat-log .msg").allTextContents()).toEqual([
      "What does notes.txt say?",
      "Let me read it.",
      "The file says hello.",
      "And now?",
      "Still hello.",
    ]);
    expect(await page.locator(".chat-log pre.result").textContent()).toContain("hello from the workspace");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows a call waiting for approval in the conversation, and Approve runs it", async () => {
    agent.fake.script(
      { toolCalls: [{ name: "edit.write", args: { path: "approved.txt", text: "made on the page\n" } }] },
      { text: "Written." },
    );
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/agent/");
    await page.getByLabel("Message").fill("Write approved.txt");
    await page.getByRole("button", { name: "Send" }).click();
    const card = page.locator(".tool-call .approval-inline");
    await card.waitFor();
    expect(await card.locator(".reason").textContent()).toMatch(/^Waiting for your approval: /);
    expect(existsSync(join(agent.workspace, "approved.txt"))).toBe(false);
    await screenshot(page, "agent-chat-approval");
    await card.getByRole("button", { name: "Approve", exact: true }).click();
    const call = page.locator('li.tool-call[data-tool="edit.write"][data-state="ok"]');
    await call.waitFor();
    expect(await readFile(join(agent.workspace, "approved.txt"), "utf8")).toBe("made on the page\n");
    // the box closed: one line says what was decided, no stale "Waiting for your approval"
    expect(await call.locator(".approval-inline").count()).toBe(0);
    expect(await call.locator(".decided").textContent()).toBe("Approved.");
    expect(await call.textContent()).not.toContain("Waiting for your approval");
    await page.locator(".chat-log .summary").waitFor();
    expect(await page.locator(".chat-log .msg.assistant").last().textContent()).toBe("Written.");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("closes a waiting box decided elsewhere (the overview, the CLI) once its call's result comes", async () => {
    agent.fake.script(
      { toolCalls: [{ name: "edit.write", args: { path: "elsewhere.txt", text: "decided elsewhere\n" } }] },
      { text: "Done." },
    );
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/agent/");
    await page.getByLabel("Message").fill("Write elsewhere.txt");
    await page.getByRole("button", { name: "Send" }).click();
    const card = page.locator(".tool-call .approval-inline");
    await card.waitFor();
    const key = await card.getAttribute("data-approval");
    const decided = await fetch(`${agent.url}/v1/approvals/${key?.replace("/byteseek/approval/", "")}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve" }),
    });
    expect(decided.status).toBe(200);
    const call = page.locator('li.tool-call[data-tool="edit.write"][data-state="ok"]');
    await call.waitFor();
    expect(await call.locator(".approval-inline").count()).toBe(0);
    expect(await call.locator(".decided").textContent()).toBe("Approved.");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("renders the answer's markdown, keeps any HTML in it as text, and sends the model picked", async () => {
    const answer = [
      "Here is **the plan** for `notes.txt`:",
      "",
      "- read it with *edit.read*",
      "- then [the docs](https://example.com/docs) and [a trap](javascript:alert(1))",
      "",
      "```ts",
      "const x = 1 < 2;",
      "```",
      '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">',
    ].join("\n");
    agent.fake.script({ text: answer });
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/agent/");
    // the workspace the tools work in, and the models the server lists, the configured one chosen
    await page.locator(".chat-where code").waitFor();
    expect(await page.locator(".chat-where code").textContent()).toBe(agent.workspace);
    const picker = page.getByLabel("Model");
    await picker.waitFor();
    expect(await picker.locator("option").allTextContents()).toEqual(["fake-1", "fake-2"]);
    expect(await picker.inputValue()).toBe("fake-1");
    await picker.selectOption("fake-2");
    await page.getByLabel("Message").fill("What is the plan?");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".chat-log .summary").waitFor();
    expect(agent.fake.requests.at(-1)?.model).toBe("fake-2");

    const msg = page.locator(".chat-log .msg.assistant").last();
    await msg.locator("pre.md-code code").waitFor();
    expect(await msg.locator("strong").textContent()).toBe("the plan");
    expect(await msg.locator("p code").first().textContent()).toBe("notes.txt");
    expect(await msg.locator("ul > li").count()).toBe(2);
    expect(await msg.locator("ul em").textContent()).toBe("edit.read");
    expect(await msg.locator("pre.md-code code").textContent()).toBe("const x = 1 < 2;");
    // links: only http(s) ones become links, opened apart from the page
    const links = msg.locator("a");
    expect(await links.count()).toBe(1);
    expect(await links.getAttribute("href")).toBe("https://example.com/docs");
    expect(await links.getAttribute("rel")).toBe("noopener noreferrer nofollow");
    expect(await msg.textContent()).toContain("[a trap](javascript:alert(1))");
    // the attempted injection is text on screen: no element was made of it, nothing ran
    expect(await msg.locator("script, img").count()).toBe(0);
    expect(await msg.textContent()).toContain(
      '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">',
    );
    expect(await page.evaluate("window.pwned")).toBeUndefined();
    expect(errors).toEqual([]);
    await docsShot(page, "chat");
    await context.close();
  });

  it("Deny refuses the waiting call: the conversation shows it denied and nothing is written", async () => {
    agent.fake.script(
      { toolCalls: [{ name: "edit.write", args: { path: "denied.txt", text: "never\n" } }] },
      { text: "Understood." },
    );
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/agent/");
    await page.getByLabel("Message").fill("Write denied.txt");
    await page.getByRole("button", { name: "Send" }).click();
    const card = page.locator(".tool-call .approval-inline");
    await card.waitFor();
    await card.getByRole("button", { name: "Deny" }).click();
    const call = page.locator('li.tool-call[data-tool="edit.write"][data-state="error"][data-kind="denied"]');
    await call.waitFor();
    expect(await call.locator(".kind").textContent()).toMatch(/^denied · /);
    await page.locator(".chat-log .summary").waitFor();
    expect(await page.locator(".chat-log .summary").textContent()).toContain("1 tool call (1 failed)");
    expect(existsSync(join(agent.workspace, "denied.txt"))).toBe(false);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("puts an upstream MCP server's question in the conversation: its form filled and Accept answer it, Decline declines, Cancel cancels, and the upstream's result reaches the model", async () => {
    await agent.tree.set(
      "/byteseek/mcp/askio",
      json({ command: [process.execPath, ASKING], readOnlyPaths: TEST_INSTALL } as never),
    );
    const [report] = await agent.bs.mcp.sync("askio");
    expect(report?.ok, report?.error).toBe(true);
    agent.fake.script(
      { toolCalls: [{ name: "askio.ask", args: { why: "Who reviews this?" } }] },
      { text: "Thanks." },
      { toolCalls: [{ name: "askio.ask", args: { why: "Anyone else?" } }] },
      { text: "Nobody, then." },
      { toolCalls: [{ name: "askio.ask", args: { why: "Last chance?" } }] },
      { text: "Dismissed." },
    );
    const { page, context, errors } = await browser.open(agent.url);
    await page.goto("/agent/");
    await page.getByLabel("Message").fill("Ask who reviews");
    await page.getByRole("button", { name: "Send" }).click();
    const card = page.locator('.tool-call[data-tool="askio.ask"] .approval-inline');
    await card.waitFor();
    expect(await card.locator(".reason").textContent()).toBe(
      'The MCP server "askio" asks (during askio.ask): Who reviews this?',
    );
    await card.getByLabel(/^name/).fill("Ada");
    await card.getByLabel(/^age/).fill("36");
    await card.getByRole("button", { name: "Accept" }).click();
    const accepted = page.locator('li.tool-call[data-tool="askio.ask"][data-state="ok"]');
    await accepted.waitFor();
    expect(await accepted.locator(".decided").textContent()).toBe("Answered: accept.");
    expect(await accepted.locator("pre.result").textContent()).toBe(
      'action=accept content={"name":"Ada","age":36}',
    );
    await page.locator(".chat-log .summary").waitFor();
    const sent = agent.fake.requests.at(-1)?.messages.at(-1);
    expect(sent).toMatchObject({ role: "tool", text: 'action=accept content={"name":"Ada","age":36}' });

    // the next questions: Decline and Cancel each send their action, and the model gets the result
    for (const [n, why, button] of [
      [1, "Anyone else?", "Decline"],
      [2, "Last chance?", "Cancel"],
    ] as const) {
      await page.getByLabel("Message").fill(why);
      await page.getByRole("button", { name: "Send" }).click();
      const next = page.locator(".tool-call .approval-inline", { hasText: why });
      await next.waitFor();
      if (button === "Decline") {
        // the answer's response is held until the call's result is on screen (the race CI met):
        // the line still says what was answered, not "Approved."
        const shown = page.locator('li.tool-call[data-tool="askio.ask"][data-state="ok"]').nth(n);
        await page.route("**/v1/approvals/**", async (route) => {
          const response = await route.fetch();
          await shown.waitFor();
          await route.fulfill({ response });
        });
      }
      await next.getByRole("button", { name: button }).click();
      await page.locator(".chat-log .summary").nth(n).waitFor();
      await page.unrouteAll({ behavior: "wait" });
      expect(agent.fake.requests.at(-1)?.messages.at(-1)).toMatchObject({
        role: "tool",
        text: `action=${button.toLowerCase()} content=null`,
      });
    }
    expect(await page.locator(".chat-log .decided").allTextContents()).toEqual([
      "Answered: accept.",
      "Answered: decline.",
      "Answered: cancel.",
    ]);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows the answer while it streams, and Stop ends the turn", async () => {
    agent.fake.script({ text: "Thinking out loud", hold: "body" });
    const { page, context } = await browser.open(agent.url);
    await page.goto("/agent/");
    await page.getByLabel("Message").fill("Take your time");
    await page.getByRole("button", { name: "Send" }).click();
    // the reply's text is on screen while the model has not finished it
    await page.locator(".chat-log .msg.assistant", { hasText: "Thinking out loud" }).waitFor();
    expect(await page.locator(".chat-log .summary").count()).toBe(0);
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator(".chat-log .msg.error").waitFor();
    expect(await page.locator(".chat-log .msg.error").textContent()).toBe("Stopped.");
    expect(await page.getByRole("button", { name: "Stop" }).isHidden()).toBe(true);
    await context.close();
  });

  it("says what to do when the server has no model", async () => {
    const bare = await openTree({ backend: "memory" });
    const none = await createByteseek({
      tree: bare,
      workspace: agent.workspace,
      logger: silent,
      env: {},
      sweep: false,
    });
    const other = await buildApp({ tree: bare, logger: silent, runtime: none.runtime, agent: none.agent });
    if (!other.hasRoute({ method: "GET", url: "/" })) await other.register(webRoutes);
    const otherUrl = await other.listen({ host: "127.0.0.1", port: 0 });
    try {
      const { page, context } = await browser.open(otherUrl);
      await page.goto("/agent/");
      await page.getByLabel("Message").fill("hi");
      await page.getByRole("button", { name: "Send" }).click();
      const error = page.locator(".chat-log .msg.error");
      await error.waitFor();
      expect(await error.textContent()).toContain("no model provider configured");
      expect(await error.textContent()).toContain("/byteseek/llm/url");
      await context.close();
    } finally {
      await other.close();
      await none.close();
      await bare.close();
    }
  });
});
