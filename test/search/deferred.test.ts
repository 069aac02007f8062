import { afterEach, describe, expect, it } from "vitest";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import { json } from "../../tree/index.js";
import type { Json } from "../../tree/value.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "../agent/stack.js";
import type { FakeRequest } from "../fake-llm/server.js";

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (open.length) await open.pop()?.();
});

type Harness = AgentStack;

async function harness(): Promise<Harness> {
  const stack = await startAgentStack("byteseek-deferred-");
  open.push(() => stopAgentStack(stack));
  return stack;
}

/** A person's shell tool: prints its argument. */
function echoTool(name: string, description: string) {
  return json({
    name,
    description,
    snippet: description,
    params: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
    impl: { kind: "shell", argv: ["echo", "{msg}"] },
  });
}

async function setToolList(h: Harness, toolList: Record<string, unknown>): Promise<void> {
  const node = await h.tree.get(POLICY_KEY);
  const policy = node?.kind === "json" ? (node.value.value as Record<string, unknown>) : {};
  await h.tree.set(POLICY_KEY, json({ ...policy, toolList } as Json), { force: true });
}

async function declareMany(h: Harness, n: number): Promise<void> {
  for (let i = 0; i < n; i++)
    await h.tree.set(
      `/byteseek/tools/bulk.t${i}`,
      echoTool(`bulk.t${i}`, `bulk helper number ${i} for ledgers`),
    );
  await h.tree.set(
    "/byteseek/tools/text.shout",
    echoTool("text.shout", "shout a message loudly in capitals"),
  );
}

/** The tool names a request offered, in the tree's spelling (providers get `family_verb`). */
const names = (req: FakeRequest | undefined) =>
  (req?.tools ?? []).map((t) => t.name.replace("_", ".")).sort();

describe("deferred tool lists", () => {
  it("offers a tool found by tools.search with its schema from the next step, then records its call", async () => {
    const h = await harness();
    await setToolList(h, { mode: "auto", threshold: 10 });
    await declareMany(h, 30);
    h.fake.script(
      { toolCalls: [{ name: "tools.search", args: { query: "shout a message" } }] },
      (req) =>
        names(req).includes("text.shout")
          ? { toolCalls: [{ name: "text.shout", args: { msg: "hello" } }] }
          : { text: "text.shout was not offered" },
      { text: "shouted" },
    );
    const r = await h.bs.agent.runTurn({ vid: "d1", input: "shout hello" });
    expect(r.text).toBe("shouted");
    expect(r.calls.map((c) => [c.name, c.kind])).toEqual([
      ["tools.search", "ok"],
      ["text.shout", "ok"],
    ]);
    const first = h.fake.requests[0];
    expect(names(first)).toContain("tools.search");
    expect(names(first)).toContain("edit.read");
    expect(names(first)).not.toContain("text.shout");
    expect(names(first).some((n) => n.startsWith("bulk"))).toBe(false);
    // the rest is named in the system prompt, so the model knows what to look for
    expect(first?.system).toContain("Also available (call tools.search to use one)");
    const found = h.fake.requests[1]?.messages.at(-1);
    expect(found?.role === "tool" ? found.text : "").toMatch(/^1 tool|text\.shout/m);
    const record = await h.tree.get(r.records[1]!);
    expect(record?.kind === "json" ? (record.value.value as { name: string }).name : "").toBe("text.shout");
  });

  it("sends every offered tool in full below the threshold and in mode all", async () => {
    const h = await harness();
    await declareMany(h, 30);
    expect((await h.bs.prompt("d2")).mode).toBe("all");
    expect((await h.bs.prompt("d2")).tools.map((t) => t.name)).toContain("bulk.t7");
    await setToolList(h, { mode: "all", threshold: 1 });
    expect((await h.bs.prompt("d2")).deferred).toBe(0);
    await setToolList(h, { mode: "deferred" });
    const built = await h.bs.prompt("d2");
    expect(built.mode).toBe("deferred");
    expect(built.deferred).toBeGreaterThanOrEqual(31);
    expect(built.tools.map((t) => t.name)).toContain("shell.run");
    expect(built.tools.some((t) => t.name.startsWith("bulk."))).toBe(false);
  });

  it("keeps one-line entries within the byte budget and counts the rest", async () => {
    const h = await harness();
    await declareMany(h, 30);
    await setToolList(h, { mode: "deferred", budgetBytes: 200 });
    const built = await h.bs.prompt("d3");
    const lines = built.system.split("\n");
    const from = lines.indexOf("Also available (call tools.search to use one):");
    const section = lines.slice(from + 1, lines.indexOf("", from));
    const listed = section.filter((l) => l.startsWith("- ") && !l.startsWith("- …"));
    expect(listed.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(`${listed.join("\n")}\n`)).toBeLessThanOrEqual(200);
    expect(built.system).toMatch(
      new RegExp(`and ${built.deferred - listed.length} more: find them with tools\\.search`),
    );
  });

  it("does not defer when tools.search is switched off: the model could reach nothing else", async () => {
    const h = await harness();
    await declareMany(h, 30);
    await setToolList(h, { mode: "deferred" });
    const node = await h.tree.get("/byteseek/tools/tools.search");
    const decl = node?.kind === "json" ? (node.value.value as Record<string, unknown>) : {};
    await h.tree.set("/byteseek/tools/tools.search", json({ ...decl, enabled: false }));
    const built = await h.bs.prompt("d4");
    expect(built.mode).toBe("all");
    expect(built.tools.map((t) => t.name)).toContain("text.shout");
  });

  it("tools.search answers only the tools the run is offered", async () => {
    const h = await harness();
    await declareMany(h, 3);
    await h.tree.set(
      "/byteseek/tools/text.quiet",
      json({ ...JSON.parse(JSON.stringify(echoTool("text.quiet", "shout nothing").value)), enabled: false }),
    );
    const r = await h.bs.runtime.call("tools.search", { query: "shout" }, { vid: "d5" });
    expect(r.kind).toBe("ok");
    expect(r.details.names).toEqual(["text.shout"]);
    const none = await h.bs.runtime.call("tools.search", { query: "zzyzx" }, { vid: "d5" });
    expect(none.text).toMatch(/No tool matches "zzyzx"/);
  });
});
