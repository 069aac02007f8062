/**
 * Diff of two runs (agent/replay/diff.ts, `kvspace runs diff`, `GET /v1/agent/runs/<a>/diff/<b>`):
 * runs recorded by the real loop against the fake model, a real classic-level tree and workspace,
 * the same task with one thing changed at a time — the input, the system prompt, the model's
 * answer, a call's arguments, a file the call reads — each found at exactly its step.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffRunsIn } from "../../agent/replay/diff.js";
import type { Byteseek } from "../../compose/byteseek.js";
import { buildApp } from "../../server/app.js";
import { str } from "../../tree/index.js";
import { runInProcess } from "../cli/in-process.js";
import type { FakeLlm } from "../fake-llm/server.js";
import { silent, type tempDir } from "../tools/helpers.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "./stack.js";

let stack: AgentStack | undefined;
let dir: Awaited<ReturnType<typeof tempDir>>;
let fake: FakeLlm;
let bs: Byteseek;
let workspace: string;

/** Three steps: read a.txt, get /notes/fixed, answer. `change` alters one part. */
async function run(
  vid: string,
  change: { input?: string; answer?: string; key?: string } = {},
): Promise<void> {
  fake.script(
    { text: "Reading.", toolCalls: [{ name: "edit.read", args: { path: "a.txt" } }] },
    { toolCalls: [{ name: "tree.get", args: { key: change.key ?? "/notes/fixed" } }] },
    { text: change.answer ?? "a.txt says x = 1; the note says keep." },
  );
  const r = await bs.agent.runTurn({ vid, input: change.input ?? "what do a.txt and the note say?" });
  expect(r.reason).toBe("done");
}

beforeAll(async () => {
  stack = await startAgentStack("byteseek-run-diff-");
  ({ dir, workspace, fake, bs } = stack);
  await writeFile(join(workspace, "a.txt"), "x = 1\n");
  await bs.tree.set("/notes/fixed", str("keep"));
  await bs.tree.set("/notes/other", str("drop"));
  await run("same1");
  await run("same2");
  await run("input", { input: "what does a.txt say?" });
  await run("answer", { answer: "a.txt says x = 1." });
  await run("call", { key: "/notes/other" });
  const template = await bs.tree.get("/byteseek/prompt/system");
  if (template?.kind !== "char/utf8") throw new Error("not seeded");
  await bs.tree.set("/byteseek/prompt/system", str(`Be brief.\n\n${template.value.value}`));
  await run("prompt");
  await bs.tree.set("/byteseek/prompt/system", template.value);
  await writeFile(join(workspace, "a.txt"), "x = 2\n");
  await run("result");
});

afterAll(async () => {
  if (stack) await stopAgentStack(stack);
});

describe("kvspace runs diff", () => {
  it("finds nothing between two runs of the same task with the same answers", async () => {
    const d = await diffRunsIn(bs.tree, "same1", "same2");
    expect(d).toEqual({
      a: "same1",
      b: "same2",
      identical: true,
      steps: { a: 3, b: 3 },
      calls: { a: 2, b: 2 },
    });
  });

  it("finds each kind of divergence at exactly its step", async () => {
    const input = await diffRunsIn(bs.tree, "same1", "input");
    expect(input.divergence).toMatchObject({ kind: "prompt", step: 1, summary: "the turn's input differs" });
    expect(input.divergence?.diff).toContain("+what does a.txt say?");

    const prompt = await diffRunsIn(bs.tree, "same1", "prompt");
    expect(prompt.divergence).toMatchObject({ kind: "prompt", step: 1 });
    expect(prompt.divergence?.diff).toContain("+Be brief.");

    const answer = await diffRunsIn(bs.tree, "same1", "answer");
    expect(answer.divergence).toMatchObject({ kind: "answer", step: 3, turn: 1, turnStep: 3 });
    expect(answer.divergence?.diff).toContain("+a.txt says x = 1.");

    const call = await diffRunsIn(bs.tree, "same1", "call");
    expect(call.divergence).toMatchObject({ kind: "call", step: 2, call: 1, tool: "tree.get" });
    expect(call.divergence?.diff).toEqual([
      '- same1: tree.get {"key":"/notes/fixed"}',
      '+ call: tree.get {"key":"/notes/other"}',
    ]);

    const result = await diffRunsIn(bs.tree, "same1", "result");
    expect(result.divergence).toMatchObject({
      kind: "result",
      step: 1,
      call: 1,
      tool: "edit.read",
      records: { a: "/byteseek/tool/same1/0", b: "/byteseek/tool/result/0" },
    });
    expect(result.divergence?.diff.join("\n")).toMatch(/-.*x = 1[\s\S]*\+.*x = 2/);
  });

  it("exits 0 when the runs are the same and 1 when they differ, printing where", async () => {
    const env = { KVSPACE: join(dir.path, "db") };
    const held = { openStore: async () => ({ ...bs.tree, close: async () => {} }) };
    const same = await runInProcess(["runs", "diff", "same1", "same2"], { env }, held);
    expect(same).toMatchObject({ code: 0, stderr: "" });
    expect(same.stdout).toBe(
      "runs same1 and same2 are the same: 3 steps, 2 calls (every prompt, answer, call and result equal)\n",
    );
    const differ = await runInProcess(["runs", "diff", "same1", "call"], { env }, held);
    expect(differ.code).toBe(1);
    expect(differ.stdout.split("\n").slice(0, 4)).toEqual([
      "runs same1 and call diverge at step 2 (turn 1, step 2), call 1 tree.get: the tool call differs",
      "  records: same1 /byteseek/tool/same1/1 · call /byteseek/tool/call/1",
      "  the model called tree.get with other arguments",
      '    - same1: tree.get {"key":"/notes/fixed"}',
    ]);
    // -o json: the document GET /v1/agent/runs/<a>/diff/<b> answers, with the same exit code
    const json = await runInProcess(["runs", "diff", "same1", "call", "-o", "json"], { env }, held);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      a: "same1",
      b: "call",
      identical: false,
      divergence: { kind: "call", step: 2, records: { a: "/byteseek/tool/same1/1" } },
    });
    const missing = await runInProcess(["runs", "diff", "same1", "nosuch"], { env }, held);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^there is no run nosuch/);
  });

  it("answers GET /v1/agent/runs/<a>/diff/<b>, and 404 for a run that does not exist", async () => {
    const app = await buildApp({ tree: bs.tree, logger: silent, runtime: bs.runtime, web: false });
    try {
      const res = await app.inject({ method: "GET", url: "/v1/agent/runs/same1/diff/answer" });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ identical: false, divergence: { kind: "answer", step: 3 } });
      const none = await app.inject({ method: "GET", url: "/v1/agent/runs/same1/diff/nosuch" });
      expect(none.statusCode).toBe(404);
      expect(none.json()).toMatchObject({ error: { code: "AGENT_RUN_NOT_FOUND" } });
    } finally {
      await app.close();
    }
  });
});
