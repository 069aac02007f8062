/**
 * Replay of recorded runs (agent/replay/): runs recorded by the real loop against the fake model,
 * a real classic-level tree and a real workspace (edits, a failing edit, an unparsable call, a
 * sandboxed shell.run appending to a log), then replayed by the same loop with the recorded model
 * and the recorded tools — and mutated, and replayed live.
 */
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayRun } from "../../agent/replay/replay.js";
import { readTranscript } from "../../agent/replay/transcript.js";
import type { Byteseek } from "../../compose/byteseek.js";
import { liveReplayTools } from "../../compose/replay-tools.js";
import { buildApp } from "../../server/app.js";
import type { Tree } from "../../tree/types.js";
import { json, str } from "../../tree/value.js";
import { cliEnv } from "../cli/cli-server.js";
import type { FakeLlm } from "../fake-llm/server.js";
import { silent } from "../tools/helpers.js";
import { byteseek, needBuiltCli } from "./helpers.js";
import { turnDisplay } from "./replay-check.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "./stack.js";

let stack: AgentStack | undefined;
let fake: FakeLlm;
let tree: Tree;
let bs: Byteseek;
let workspace: string;

beforeAll(async () => {
  stack = await startAgentStack("byteseek-replay-");
  ({ workspace, fake, tree, bs } = stack);
});

afterAll(async () => {
  if (stack) await stopAgentStack(stack);
});

/**
 * Records run `vid`: five steps — a write and a read; an ambiguous replace and an unparsable call;
 * the repaired replace; a shell.run appending to log.txt; the answer.
 */
async function record(vid: string): Promise<string> {
  const file = `${vid}.txt`;
  fake.script(
    {
      text: "Writing it.",
      toolCalls: [
        { name: "edit.write", args: { path: file, text: "x = 1\ny = 2\nx = 1\n" } },
        { name: "edit.read", args: { path: file } },
      ],
    },
    {
      toolCalls: [
        { name: "edit.replace", args: { path: file, old: "x = 1", new: "x = 9" } },
        { name: "edit.read", argsText: "{path: oops" },
      ],
    },
    { toolCalls: [{ name: "edit.replace", args: { path: file, old: "x = 1\ny", new: "x = 9\ny" } }] },
    { toolCalls: [{ name: "shell.run", args: { command: `echo ${vid} >> log.txt` } }] },
    { text: "Done: x is 9." },
  );
  const shown = turnDisplay();
  const result = await bs.agent.runTurn({ vid, input: `fix ${file}`, onEvent: shown.onEvent });
  expect(result.reason, shown.text()).toBe("done");
  expect(result.calls.map((c) => c.kind)).toEqual(["ok", "ok", "runtime", "vet", "ok", "ok"]);
  return shown.text();
}

const logLines = async () => (await readFile(join(workspace, "log.txt"), "utf8")).trim().split("\n");

async function recordKeys(vid: string): Promise<string[]> {
  return (await readTranscript(tree, vid)).records.map((r) => r.key);
}

async function tamper(key: string, change: (record: Record<string, unknown>) => void): Promise<void> {
  const node = await tree.get(key);
  if (node?.kind !== "json") throw new Error(`no record at ${key}`);
  const value = structuredClone(node.value.value) as Record<string, unknown>;
  change(value);
  await tree.set(key, json(value as never), { force: true });
}

describe("byteseek run --replay", () => {
  let original = "";
  beforeAll(async () => {
    original = await record("rec");
  });

  it("replays a run with no model request and no tool execution, and shows the same turn", async () => {
    const requests = fake.requests.length;
    const log = await logLines();
    const file = await readFile(join(workspace, "rec.txt"), "utf8");
    const shown = turnDisplay();
    const report = await replayRun({
      tree: bs.tree,
      runtime: bs.runtime,
      logger: silent,
      vid: "rec",
      onEvent: shown.onEvent,
    });
    expect(report.divergence).toBeUndefined();
    expect(report.notes).toEqual([]);
    expect(report).toMatchObject({ turns: 1, steps: 5, calls: 6, executed: 0, modelRequests: 0 });
    expect(fake.requests.length).toBe(requests);
    expect(await logLines()).toEqual(log);
    expect(await readFile(join(workspace, "rec.txt"), "utf8")).toBe(file);
    expect(shown.text()).toBe(original);
    expect(shown.text()).toContain("/byteseek/tool/rec/");
    // what the run recorded is as it was
    expect(await recordKeys("rec")).toHaveLength(6);
    expect((await tree.get("/vthread/rec/status"))?.kind).toBe("char/utf8");
  });

  it("a record whose result was changed diverges at exactly that step and call", async () => {
    await record("mres");
    stack?.runs.exempt("mres"); // tampered on purpose below
    const keys = await recordKeys("mres");
    // the fifth record: step 3's repaired replace
    await tamper(keys[4] as string, (r) => {
      r.text = "Replaced 2 lines (tampered)";
    });
    const report = await replayRun({ tree: bs.tree, runtime: bs.runtime, logger: silent, vid: "mres" });
    expect(report.divergence).toMatchObject({
      kind: "result",
      step: 3,
      call: 1,
      tool: "edit.replace",
      record: keys[4],
    });
    expect(report.divergence?.diff.join("\n")).toContain("+Replaced 2 lines (tampered)");
    expect(report.results.at(-1)?.reason).toBe("aborted");
  });

  it("a record whose arguments were changed diverges as a call at that step", async () => {
    await record("margs");
    stack?.runs.exempt("margs"); // tampered on purpose below
    const keys = await recordKeys("margs");
    await tamper(keys[1] as string, (r) => {
      r.args = { path: "elsewhere.txt" };
    });
    const report = await replayRun({ tree: bs.tree, runtime: bs.runtime, logger: silent, vid: "margs" });
    expect(report.divergence).toMatchObject({ kind: "call", step: 1, call: 2, tool: "edit.read" });
    expect(report.divergence?.diff).toEqual([
      '- recorded: edit.read {"path":"elsewhere.txt"}',
      '+ replayed: edit.read {"path":"margs.txt"}',
    ]);
  });

  it("an answer removed from the session ends the replay early, at the step where it went missing", async () => {
    await record("mend");
    stack?.runs.exempt("mend"); // tampered on purpose below
    // the run's last answer is gone: the loop asks for it and the record has none
    const page = await tree.list("/byteseek/session/mend/");
    const last = page.children.at(-1);
    await tree.del(`/byteseek/session/mend/${last?.name}`);
    const report = await replayRun({ tree: bs.tree, runtime: bs.runtime, logger: silent, vid: "mend" });
    expect(report.divergence).toMatchObject({ kind: "answer", step: 4 });
  });

  it("--live-tools runs the calls again and stops at the first result that differs", async () => {
    const before = (await logLines()).length;
    // rec.txt exists now: the run's first call (edit.write of a new file) is refused
    const stale = await replayRun({
      tree: bs.tree,
      runtime: bs.runtime,
      logger: silent,
      vid: "rec",
      live: liveReplayTools({ workspace, logger: silent }),
    });
    expect(stale.divergence).toMatchObject({ kind: "result", step: 1, call: 1, tool: "edit.write" });
    expect(stale.executed).toBe(1);
    expect(await logLines()).toHaveLength(before);

    // the workspace as it was before the run: every result is the recorded one, and the effects happen again
    await rm(join(workspace, "rec.txt"));
    const requests = fake.requests.length;
    const again = await replayRun({
      tree: bs.tree,
      runtime: bs.runtime,
      logger: silent,
      vid: "rec",
      live: liveReplayTools({ workspace, logger: silent }),
    });
    expect(again.divergence).toBeUndefined();
    expect(again.executed).toBe(5);
    expect(fake.requests.length).toBe(requests);
    expect(await readFile(join(workspace, "rec.txt"), "utf8")).toBe("x = 9\ny = 2\nx = 1\n");
    expect(await logLines()).toHaveLength(before + 1);
    expect(await recordKeys("rec")).toHaveLength(6);
  });

  it("notes a changed system prompt and a changed declaration, and still replays the record", async () => {
    const decl = await tree.get("/byteseek/tools/edit.read");
    const template = await tree.get("/byteseek/prompt/system");
    if (decl?.kind !== "json" || template?.kind !== "char/utf8") throw new Error("not seeded");
    await bs.tree.set("/byteseek/prompt/system", str(`You are a careful pirate.\n\n${template.value.value}`));
    await bs.tree.set(
      "/byteseek/tools/edit.read",
      json({ ...(decl.value.value as Record<string, never>), description: "Reads a file, carefully." }),
    );
    try {
      const report = await replayRun({ tree: bs.tree, runtime: bs.runtime, logger: silent, vid: "rec" });
      expect(report.divergence).toBeUndefined();
      const kinds = report.notes.map((n) => n.kind).sort();
      expect(kinds).toEqual(["declaration", "prompt"]);
      const prompt = report.notes.find((n) => n.kind === "prompt");
      expect(prompt?.step).toBe(1);
      expect(prompt?.diff).toContain("+You are a careful pirate.");
      expect(prompt?.diff).toContain("~ edit.read (its description or schema changed)");
      expect(report.notes.find((n) => n.kind === "declaration")?.text).toMatch(
        /^edit\.read: its declaration at \/byteseek\/tools\/edit\.read changed since the run \(pinned sha256 [0-9a-f]{12}…, now [0-9a-f]{12}…\)$/,
      );
    } finally {
      await bs.tree.set("/byteseek/prompt/system", template.value);
      await bs.tree.set("/byteseek/tools/edit.read", decl.value);
    }
  });

  it("byteseek run --replay, as a process on a server's store: notes a changed declaration on stderr, and exits 1 naming the step where a changed record diverges", async () => {
    needBuiltCli();
    await record("cli");
    stack?.runs.exempt("cli"); // tampered on purpose below
    const keys = await recordKeys("cli");
    await tamper(keys[4] as string, (r) => {
      r.text = "Replaced 2 lines (tampered)";
    });
    const decl = await tree.get("/byteseek/tools/edit.read");
    if (decl?.kind !== "json") throw new Error("not seeded");
    await bs.tree.set(
      "/byteseek/tools/edit.read",
      json({ ...(decl.value.value as Record<string, never>), description: "Reads a file, slowly." }),
    );
    const app = await buildApp({
      tree: bs.tree,
      logger: silent,
      runtime: bs.runtime,
      agent: bs.agent,
      web: false,
    });
    try {
      const url = await app.listen({ host: "127.0.0.1", port: 0 });
      const requests = fake.requests.length;
      const log = await logLines();
      const out = await byteseek(["run", "--replay", "cli"], cliEnv(url, { BYTESEEK_WORKSPACE: workspace }));
      expect(out.code, out.stderr).toBe(1);
      const err = out.stderr.split("\n");
      expect(err).toContain("turn 1: fix cli.txt");
      expect(err).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^note: step 1: the prompt differs from the recorded one from step 1 on/),
          expect.stringMatching(
            /^note: step 1: edit\.read: its declaration at \/byteseek\/tools\/edit\.read changed since the run/,
          ),
          `replay of cli diverges at step 3 (turn 1, step 3), call 1 edit.replace (${keys[4]}): the tool result differs`,
          `  record ${keys[4]} differs from the result the model was sent`,
          "    +Replaced 2 lines (tampered)",
          "(0 tool calls run, 0 model requests; the replay stopped there)",
        ]),
      );
      // the turns up to the divergence, as the run showed them
      expect(out.stdout).toContain(`✓ ok in`);
      expect(out.stdout).toContain(keys[3]);
      expect(fake.requests.length).toBe(requests);
      expect(await logLines()).toEqual(log);
    } finally {
      await app.close();
      await bs.tree.set("/byteseek/tools/edit.read", decl.value);
    }
  });

  it("pairs each call with its record by origin: a record another caller added to the run between its turns shifts nothing", async () => {
    await writeFile(join(workspace, "org.txt"), "origin\n");
    fake.script(
      { toolCalls: [{ name: "edit.read", args: { path: "org.txt" } }] },
      { text: "read once" },
      { toolCalls: [{ name: "tree.get", args: { key: "/byteseek/prompt/system" } }] },
      { text: "got it" },
    );
    await bs.agent.runTurn({ vid: "org", input: "read it" });
    // a person's direct call under the run's id: its record lands between the turns' records, with no origin
    const direct = await bs.runtime.call("tree.list", { key: "/byteseek/prompt/" }, { vid: "org" });
    expect(direct.kind, direct.text).toBe("ok");
    await bs.agent.runTurn({ vid: "org", input: "get it" });
    const t = await readTranscript(tree, "org");
    expect(t.records.map((r) => r.value.name)).toEqual(["edit.read", "tree.list", "tree.get"]);
    expect(
      t.turns.flatMap((turn) => turn.steps.flatMap((st) => st.calls.map((c) => c.record?.value.name))),
    ).toEqual(["edit.read", "tree.get"]);
    const requests = fake.requests.length;
    const report = await replayRun({ tree: bs.tree, runtime: bs.runtime, logger: silent, vid: "org" });
    expect(report.divergence).toBeUndefined();
    expect(report).toMatchObject({ turns: 2, calls: 2, executed: 0 });
    expect(fake.requests.length).toBe(requests);
  });

  it("refuses a run that does not exist, or has not finished", async () => {
    await expect(
      replayRun({ tree: bs.tree, runtime: bs.runtime, logger: silent, vid: "nosuchrun" }),
    ).rejects.toMatchObject({ code: "AGENT_RUN_NOT_FOUND" });
    await tree.append("/byteseek/session/half/", json({ role: "user", content: "hi" }), { vid: "half" });
    await tree.set("/vthread/half/status", str("running"), { vid: "half" });
    await expect(
      replayRun({ tree: bs.tree, runtime: bs.runtime, logger: silent, vid: "half" }),
    ).rejects.toMatchObject({
      code: "AGENT_RUN_NOT_FINISHED",
    });
    expect(existsSync(join(workspace, "half.txt"))).toBe(false);
  });
});
