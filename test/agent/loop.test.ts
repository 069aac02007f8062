import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../agent/events.js";
import type { Byteseek } from "../../compose/byteseek.js";
import type { Tree } from "../../tree/types.js";
import { formatValue, str } from "../../tree/value.js";
import type { FakeLlm, FakeRequest } from "../fake-llm/server.js";
import { startAgentStack, stopAgentStack } from "./stack.js";

type Api = "openai" | "anthropic";

interface Harness {
  fake: FakeLlm;
  tree: Tree;
  bs: Byteseek;
  workspace: string;
  value(key: string): Promise<unknown>;
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (open.length) await open.pop()?.();
});

/** A real classic-level tree, a real workspace folder and the fake model, wired by createByteseek. */
async function harness(api: Api = "openai", env: Record<string, string> = {}): Promise<Harness> {
  const stack = await startAgentStack(
    "byteseek-loop-",
    { BYTESEEK_LLM_MAX_RETRIES: "2", ...env },
    { api, providerDeps: { retry: { baseDelayMs: 5, maxDelayMs: 20 } } },
  );
  open.push(() => stopAgentStack(stack));
  const { fake, tree, bs, workspace } = stack;
  async function value(key: string): Promise<unknown> {
    const node = await tree.get(key);
    if (!node || node.kind === "index") return undefined;
    return node.kind === "json" ? node.value.value : formatValue(node.value);
  }
  return { fake, tree, bs, workspace, value };
}

const toolNames = (req: FakeRequest | undefined) => (req?.tools ?? []).map((t) => t.name);
const lastMessage = (req: FakeRequest | undefined) => req?.messages.at(-1);

async function recordKinds(h: Harness, keys: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const k of keys) out.push(String(((await h.value(k)) as { kind?: string }).kind));
  return out;
}

describe("the agent loop", () => {
  for (const api of ["openai", "anthropic"] as const) {
    it(`repairs an ambiguous edit.replace within 2 rounds: records runtime then ok (${api})`, async () => {
      const h = await harness(api);
      const file = join(h.workspace, "a.txt");
      await writeFile(file, "x = 1\ny = 2\nx = 1\nz = 3\n");
      h.fake.script(
        { toolCalls: [{ name: "edit.replace", args: { path: "a.txt", old: "x = 1", new: "x = 9" } }] },
        (req) => {
          // Only a model that was told of the failure repairs (Anthropic carries the error flag).
          const last = lastMessage(req);
          const told = last?.role === "tool" && (api === "openai" || last.isError === true);
          if (!told) return { text: "I was not told about the failure" };
          return {
            toolCalls: [
              { name: "edit.replace", args: { path: "a.txt", old: "x = 1\nz = 3", new: "x = 9\nz = 3" } },
            ],
          };
        },
        { text: "fixed the second x" },
      );
      const r = await h.bs.agent.runTurn({ vid: "p2", input: "set the last x to 9" });
      expect(r.reason).toBe("done");
      expect(r.text).toBe("fixed the second x");
      expect(r.calls.map((c) => c.kind)).toEqual(["runtime", "ok"]);
      expect(await recordKinds(h, r.records)).toEqual(["runtime", "ok"]);
      expect(r.records).toEqual(["/byteseek/tool/p2/0", "/byteseek/tool/p2/1"]);
      expect(await readFile(file, "utf8")).toBe("x = 1\ny = 2\nx = 9\nz = 3\n");
      expect(await h.value("/vthread/p2/status")).toBe("done");
      // The failing result went back to the model with its message.
      const fed = h.fake.requests[1]?.messages.at(-1);
      expect(fed?.role === "tool" ? fed.text : "").toMatch(/2|times|ambiguous|unique/i);
    });
  }

  it("stores each step in one commit: the round's results with the next answer and its tokens, the end with the status", async () => {
    const h = await harness();
    h.fake.script(
      {
        toolCalls: [
          { name: "edit.write", args: { path: "one.txt", text: "1\n" } },
          { name: "edit.read", args: { path: "one.txt" } },
        ],
      },
      { text: "wrote and read one.txt" },
    );
    const r = await h.bs.agent.runTurn({ vid: "commits", input: "write one.txt" });
    expect(r.reason).toBe("done");
    const rev = async (key: string) => {
      const node = await h.tree.get(key);
      return node && node.kind !== "index" ? { created: node.createRev, modified: node.modRev } : undefined;
    };
    const session = "/byteseek/session/commits/";
    const [user, answer, write, read, last] = await Promise.all(
      [0, 1, 2, 3, 4].map((n) => rev(`${session}${n}`)),
    );
    // the user's message alone (with the status), the first answer alone, then the two results
    // in the same commit as the answer they led to
    expect(answer!.created).toBeGreaterThan(user!.created);
    expect(write!.created).toBe(last!.created);
    expect(read!.created).toBe(last!.created);
    // the turn's end: reason, status and last turn in one commit, with the usage's last change
    const end = (await rev("/vthread/commits/status"))!.modified;
    expect((await rev("/vthread/commits/reason"))!.modified).toBe(end);
    expect((await rev("/vthread/commits/turn"))!.modified).toBe(end);
    expect((await rev("/byteseek/usage/commits"))!.modified).toBe(end);
    expect(await h.value("/byteseek/usage/commits")).toMatchObject({
      turns: 1,
      steps: 2,
      calls: 2,
      tokens: { input: r.usage.inputTokens, output: r.usage.outputTokens },
    });
  });

  it("a reply cut off by the token limit runs none of its calls and says so next time", async () => {
    const h = await harness();
    h.fake.script(
      {
        toolCalls: [
          { name: "edit.write", args: { path: "first.txt", content: "whole" } },
          { name: "edit.write", argsText: '{"path": "b.txt", "content": "half writ' },
        ],
        stop: "length",
      },
      { text: "ok, I will split it" },
    );
    const events: AgentEvent[] = [];
    const r = await h.bs.agent.runTurn({ vid: "cut", input: "write b.txt", onEvent: (e) => events.push(e) });
    expect(r.reason).toBe("done");
    expect(r.calls.map((c) => c.kind)).toEqual(["truncated", "truncated"]);
    expect(await recordKinds(h, r.records)).toEqual(["truncated", "truncated"]);
    expect(existsSync(join(h.workspace, "b.txt"))).toBe(false);
    expect(existsSync(join(h.workspace, "first.txt"))).toBe(false);
    const next = h.fake.requests[1];
    const results = (next?.messages ?? []).filter((m) => m.role === "tool");
    expect(results).toHaveLength(2);
    for (const m of results) {
      expect(m.role === "tool" ? m.text : "").toContain("cut off by the token limit");
    }
    expect(
      events.filter((e) => e.type === "tool_result").map((e) => e.type === "tool_result" && e.kind),
    ).toEqual(["truncated", "truncated"]);
  });

  it("stops after 3 rounds in which every call failed, recording why", async () => {
    const h = await harness();
    const bad = { toolCalls: [{ name: "edit.read", args: { path: "missing.txt" } }] };
    h.fake.script(bad, bad, bad, { text: "never asked" });
    const r = await h.bs.agent.runTurn({ vid: "stuck", input: "read missing.txt" });
    expect(r.reason).toBe("repair_exhausted");
    expect(r.steps).toBe(3);
    expect(h.fake.requests).toHaveLength(3);
    expect(r.text).toContain("3 rounds");
    expect(await h.value("/vthread/stuck/status")).toBe("failed");
    expect(await h.value("/vthread/stuck/reason")).toMatch(/^repair_exhausted: /);
    expect(await h.value("/vthread/stuck/‥pc")).toBeUndefined();
  });

  it("a tool declared with tree.set in turn 1 is offered and callable in turn 2", async () => {
    const h = await harness("anthropic");
    await writeFile(join(h.workspace, "notes.txt"), "alpha\nbeta\n");
    const declaration = {
      name: "text.peek",
      description: "Show a text file of the workspace",
      snippet: "text.peek(path) — show a text file",
      params: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      impl: { kind: "builtin", ref: "edit.read" },
    };
    h.fake.script(
      { toolCalls: [{ name: "tree.set", args: { key: "/byteseek/tools/text.peek", value: declaration } }] },
      { text: "declared text.peek" },
    );
    const t1 = await h.bs.agent.runTurn({ vid: "ext", input: "make a peek tool" });
    expect(t1.calls.map((c) => c.kind)).toEqual(["ok"]);
    expect(toolNames(h.fake.requests[0])).not.toContain("text_peek");

    h.fake.script(
      { toolCalls: [{ name: "text.peek", args: { path: "notes.txt" } }] },
      { text: "alpha, beta" },
    );
    const t2 = await h.bs.agent.runTurn({ vid: "ext", input: "peek at notes.txt" });
    expect(toolNames(h.fake.requests[2])).toContain("text_peek");
    expect(h.fake.requests[2]?.system).toContain("- text.peek: text.peek(path) — show a text file");
    expect(t2.reason).toBe("done");
    expect(t2.calls).toEqual([expect.objectContaining({ name: "text.peek", kind: "ok" })]);
    const fed = lastMessage(h.fake.requests[3]);
    expect(fed?.role === "tool" ? fed.text : "").toContain("beta");
  });

  it("removing the tool lines from the template changes nothing; removing a declaration drops the tool", async () => {
    const h = await harness();
    const before = await h.bs.prompt("tpl");
    const template = String(await h.value("/byteseek/prompt/system"));
    await h.tree.set("/byteseek/prompt/system", str(template.replace("{{tools}}", "")));
    const after = await h.bs.prompt("tpl");
    expect(after.tools).toEqual(before.tools);
    expect(after.system).toContain("- edit.replace:");
    expect(after.system).toContain("- shell.run:");

    await h.tree.del("/byteseek/tools/shell.run");
    h.fake.script({ text: "hi" });
    await h.bs.agent.runTurn({ vid: "tpl", input: "hello" });
    const req = h.fake.requests[0];
    expect(toolNames(req)).toContain("edit_replace");
    expect(toolNames(req)).not.toContain("shell_run");
    expect(req?.system).not.toContain("shell.run");
    expect(toolNames(req)).toHaveLength(before.tools.length - 1);
  });

  it("a failing call of turn 1 is listed under [previous tool results] in turn 2's system prompt", async () => {
    const h = await harness();
    h.fake.script(
      { toolCalls: [{ name: "edit.read", args: { path: "nope.txt" } }] },
      { text: "that file does not exist" },
      { text: "ok" },
    );
    const t1 = await h.bs.agent.runTurn({ vid: "prev", input: "read nope.txt" });
    expect(h.fake.requests[0]?.system).not.toContain("[previous tool results]");
    await h.bs.agent.runTurn({ vid: "prev", input: "try again" });
    const system = h.fake.requests[2]?.system ?? "";
    expect(system).toContain("[previous tool results]");
    expect(system).toContain(`- ${t1.records[0]} edit.read runtime: `);
    // Another run is not told about it.
    expect((await h.bs.prompt("other")).system).not.toContain("[previous tool results]");
  });

  it("retries a 429 and goes on", async () => {
    const h = await harness();
    h.fake.script({ status: 429, retryAfter: 0 }, { text: "after the wait" });
    const events: AgentEvent[] = [];
    const r = await h.bs.agent.runTurn({ vid: "rl", input: "hi", onEvent: (e) => events.push(e) });
    expect(r.reason).toBe("done");
    expect(r.text).toBe("after the wait");
    expect(events.some((e) => e.type === "retry" && e.status === 429)).toBe(true);
    expect(h.fake.requests).toHaveLength(2);
  });

  it("a model answering 500 forever fails the turn clearly", async () => {
    const h = await harness("anthropic", { BYTESEEK_LLM_MAX_RETRIES: "1" });
    h.fake.script({ status: 500, message: "overloaded" }, { status: 500, message: "overloaded" });
    const r = await h.bs.agent.runTurn({ vid: "down", input: "hi" });
    expect(r.reason).toBe("model_error");
    expect(r.error?.code).toBe("LLM_HTTP");
    expect(r.text).toMatch(/500.*overloaded.*gave up after 2 attempts/);
    expect(await h.value("/vthread/down/status")).toBe("failed");
    expect(await h.value("/vthread/down/reason")).toMatch(/^model_error: /);
  });

  it("a stream cut mid-way fails the turn with LLM_STREAM_CUT and runs nothing", async () => {
    const h = await harness();
    h.fake.script({
      toolCalls: [{ name: "edit.write", args: { path: "c.txt", content: "x".repeat(200) } }],
      cutAfterBytes: 300,
    });
    const r = await h.bs.agent.runTurn({ vid: "cutoff", input: "write c.txt" });
    expect(r.reason).toBe("model_error");
    expect(r.error?.code).toBe("LLM_STREAM_CUT");
    expect(r.calls).toEqual([]);
    expect(existsSync(join(h.workspace, "c.txt"))).toBe(false);
    expect(await h.value("/vthread/cutoff/status")).toBe("failed");
  });

  it("keeps the messages under /byteseek/session/<vid>/ and tokens and calls at /byteseek/usage/<vid>", async () => {
    const h = await harness();
    await writeFile(join(h.workspace, "r.txt"), "hello\n");
    h.fake.script(
      {
        toolCalls: [{ name: "edit.read", args: { path: "r.txt" } }],
        usage: { inputTokens: 100, outputTokens: 7 },
      },
      { text: "it says hello", usage: { inputTokens: 120, outputTokens: 5 } },
    );
    const r = await h.bs.agent.runTurn({ vid: "acct", input: "what is in r.txt?" });
    expect(r.usage).toEqual({ inputTokens: 220, outputTokens: 12 });
    const page = await h.tree.list("/byteseek/session/acct/");
    const roles = page.children.map((c) =>
      c.kind === "json" && c.value ? (c.value.value as { role: string }).role : "?",
    );
    expect(roles).toEqual(["user", "assistant", "tool", "assistant"]);
    await h.bs.runtime.flush();
    const usage = (await h.value("/byteseek/usage/acct")) as Record<string, unknown>;
    expect(usage).toMatchObject({ calls: 1, turns: 1, tokens: { input: 220, output: 12 } });

    // A second turn continues the same conversation and adds to the counters.
    h.fake.script({ text: "still hello" });
    await h.bs.agent.runTurn({ vid: "acct", input: "and now?" });
    expect(h.fake.requests[2]?.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
    await h.bs.runtime.flush();
    expect(await h.value("/byteseek/usage/acct")).toMatchObject({ turns: 2, calls: 1 });
  });

  it("editing /byteseek/prompt/system changes the next request, with no restart", async () => {
    const h = await harness();
    h.fake.script({ text: "one" }, { text: "two" });
    await h.bs.agent.runTurn({ vid: "edit", input: "hi" });
    expect(h.fake.requests[0]?.system).toContain("You are byteseek");
    await h.tree.set("/byteseek/prompt/system", str("You are a terse pirate.\n\n{{tools}}"));
    await h.bs.agent.runTurn({ vid: "edit", input: "hi again" });
    const system = h.fake.requests[1]?.system ?? "";
    expect(system.startsWith("You are a terse pirate.")).toBe(true);
    expect(system).not.toContain("You are byteseek");
    expect(system).toContain("- edit.read:");
  });

  it("an unparsable argument text gets a vet result and the run goes on", async () => {
    const h = await harness();
    h.fake.script({ toolCalls: [{ name: "edit.read", argsText: "{path: r.txt}" }] }, { text: "sorry" });
    const r = await h.bs.agent.runTurn({ vid: "json", input: "read" });
    expect(r.calls.map((c) => c.kind)).toEqual(["vet"]);
    expect(await h.value(r.records[0] ?? "")).toMatchObject({ kind: "vet", isError: true });
  });
});
