/**
 * Resuming a run whose process died: each call its last assistant message left unanswered is
 * settled from its record — fed back, run again where that is safe, decided from file hashes, or
 * reported with an unknown outcome and never run again — and the run goes on. A run another live
 * process holds is refused; a server start marks runs left running as interrupted.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leaseKey } from "../../agent/lease.js";
import { sessionDir, statusKey } from "../../agent/run-keys.js";
import { listRuns, markInterrupted } from "../../agent/runs.js";
import type { Byteseek } from "../../compose/byteseek.js";
import { buildApp } from "../../server/app.js";
import type { KeyIntent } from "../../tools/call/intent.js";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import { recordsDir, type ToolRecord } from "../../tools/records/records.js";
import { createTreeDelTool } from "../../tools/tree/del.js";
import { createTreeSetTool } from "../../tools/tree/set.js";
import type { Tree } from "../../tree/types.js";
import { type Json, json, str } from "../../tree/value.js";
import { runInProcess } from "../cli/in-process.js";
import type { FakeLlm } from "../fake-llm/server.js";
import { silent } from "../tools/helpers.js";
import { agentFailure } from "./helpers.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "./stack.js";

/** The shared tree, as a command may close it (kvspace closes the store it opened). */
function unclosed(t: Tree): Tree {
  return new Proxy(t, {
    get: (target, prop) => (prop === "close" ? async () => {} : Reflect.get(target, prop)),
  });
}

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

let fake: FakeLlm;
let tree: Tree;
let bs: Byteseek;
let workspace: string;
let stack: AgentStack | undefined;

beforeAll(async () => {
  stack = await startAgentStack("byteseek-resume-");
  ({ workspace, fake, tree, bs } = stack);
});
afterAll(async () => {
  if (stack) await stopAgentStack(stack);
});

/** What a process killed mid-turn leaves: the session up to an assistant message, its status, some records. */
async function interrupted(
  vid: string,
  calls: Array<{ id: string; name: string; args: unknown }>,
  records: Array<Partial<ToolRecord> & { id: string }>,
): Promise<void> {
  await tree.append(sessionDir(vid), json({ role: "user", content: "do the things" }), { vid });
  await tree.append(
    sessionDir(vid),
    json({
      role: "assistant",
      text: "",
      toolCalls: calls.map((c) => ({ id: c.id, name: c.name, argsText: JSON.stringify(c.args) })),
    }),
    { vid },
  );
  for (const { id, ...r } of records) {
    const call = calls.find((c) => c.id === id);
    const record: ToolRecord = {
      name: call?.name ?? "?",
      args: call?.args ?? {},
      kind: "runtime",
      isError: true,
      text: "started",
      details: { code: "started" },
      ts: Date.now(),
      ms: 0,
      state: "started",
      origin: { message: 1, id },
      ...r,
    };
    await tree.append(recordsDir(vid), json(record as unknown as Json), { vid, ro: true });
  }
  await tree.set(statusKey(vid), str("running"), { vid });
}

/** The keys a tree.set / tree.del call would record in its started record, as the tool plans them now. */
async function plannedKeys(tool: "tree.set" | "tree.del", args: Record<string, unknown>, vid: string) {
  const t = tool === "tree.set" ? createTreeSetTool() : createTreeDelTool();
  return (await t.keyIntent?.(args, { tree, vid })) as KeyIntent[];
}

/** Runs `fn` under the default policy changed by `patch`, then puts the policy back. */
async function withPolicy(patch: Record<string, Json>, fn: () => Promise<void>): Promise<void> {
  const before = await tree.get(POLICY_KEY);
  const value = (before?.kind === "json" ? before.value.value : {}) as Record<string, Json>;
  await tree.set(POLICY_KEY, json({ ...value, ...patch }), { ro: true, force: true });
  try {
    await fn();
  } finally {
    if (before?.kind === "json") await tree.set(POLICY_KEY, before.value, { ro: true, force: true });
    else await tree.del(POLICY_KEY, { force: true });
  }
}

describe("resuming an interrupted run", () => {
  it("feeds back done calls, re-runs reads and untouched edits, finds applied edits, and never re-runs a command", async () => {
    await writeFile(join(workspace, "applied.txt"), "new\n");
    await writeFile(join(workspace, "changed.txt"), "someone else's\n");
    await writeFile(join(workspace, "read.txt"), "hello\n");
    const calls = [
      { id: "c1", name: "edit.read", args: { path: "read.txt" } },
      { id: "c2", name: "edit.write", args: { path: "created.txt", text: "made once\n" } },
      { id: "c3", name: "edit.write", args: { path: "applied.txt", text: "new\n" } },
      { id: "c4", name: "shell.run", args: { command: "echo ran >> ran.log" } },
      { id: "c5", name: "edit.write", args: { path: "changed.txt", text: "mine\n" } },
      { id: "c6", name: "edit.read", args: { path: "read.txt" } },
      { id: "c7", name: "edit.read", args: { path: "read.txt" } },
    ];
    const file = (name: string) => join(bs.runtime.workspace, name);
    await interrupted("res1", calls, [
      { id: "c1", state: "done", kind: "ok", isError: false, text: "recorded read", details: {} },
      {
        id: "c2",
        sideEffect: "files",
        files: [{ path: file("created.txt"), before: null, after: sha("made once\n") }],
      },
      {
        id: "c3",
        sideEffect: "files",
        files: [{ path: file("applied.txt"), before: sha("old\n"), after: sha("new\n") }],
      },
      { id: "c4", sideEffect: "other" },
      {
        id: "c5",
        sideEffect: "files",
        files: [{ path: file("changed.txt"), before: sha("old\n"), after: sha("mine\n") }],
      },
      { id: "c6", sideEffect: "none" },
    ]);
    fake.script({ text: "all settled" });

    const r = await bs.agent.resumeRun({ vid: "res1" });

    expect(r.reason).toBe("done");
    expect(r.text).toBe("all settled");
    expect(r.resumed).toEqual([
      { id: "c1", name: "edit.read", decision: "recorded" },
      { id: "c2", name: "edit.write", decision: "rerun" },
      { id: "c3", name: "edit.write", decision: "applied" },
      { id: "c4", name: "shell.run", decision: "unknown" },
      { id: "c5", name: "edit.write", decision: "file_changed" },
      { id: "c6", name: "edit.read", decision: "rerun" },
      { id: "c7", name: "edit.read", decision: "not_started" },
    ]);
    expect(await readFile(join(workspace, "created.txt"), "utf8")).toBe("made once\n");
    expect(await readFile(join(workspace, "changed.txt"), "utf8")).toBe("someone else's\n");
    await expect(readFile(join(workspace, "ran.log"), "utf8")).rejects.toThrow();

    // the model was told each outcome, the unknown one as such
    const told = fake.requests.at(-1)?.messages.filter((m) => m.role === "tool") ?? [];
    expect(told.map((m) => (m.role === "tool" ? m.text : ""))).toEqual([
      "recorded read",
      expect.stringMatching(/^Created created\.txt/),
      expect.stringMatching(/had already been applied/),
      expect.stringMatching(/whether it took effect is unknown\. It was not run again/),
      expect.stringMatching(/has changed since/),
      expect.stringMatching(/hello/),
      expect.stringMatching(/hello/),
    ]);
    // every record is done now; the re-run ones kept their keys
    const recs = (await tree.list(recordsDir("res1"))).children.map(
      (c) => (c.kind === "json" ? c.value?.value : undefined) as { state: string },
    );
    expect(recs).toHaveLength(7);
    expect(recs.every((v) => v.state === "done")).toBe(true);
    expect(await tree.get(statusKey("res1"))).toMatchObject({ value: { value: "done" } });
  });

  it("decides interrupted tree writes from each key's version and value: landed ones are not written again", async () => {
    const k = (n: string) => `/scratch/res5/${n}`;
    await tree.set(k("landed"), str("old"));
    await tree.set(k("pending"), str("old"));
    await tree.set(k("moved"), str("old"));
    await tree.set(k("gone"), str("bye"));
    const calls = [
      { id: "c1", name: "tree.set", args: { key: k("landed"), value: "new" } },
      { id: "c2", name: "tree.set", args: { key: k("pending"), value: "new" } },
      { id: "c3", name: "tree.set", args: { key: k("moved"), value: "new" } },
      { id: "c4", name: "tree.del", args: { key: k("gone") } },
      { id: "c5", name: "tree.set", args: { key: k("fresh"), value: { n: 1 } } },
    ];
    const started = [];
    for (const c of calls) {
      const keys = await plannedKeys(c.name as "tree.set" | "tree.del", c.args, "res5");
      expect(keys).toHaveLength(1);
      started.push({ id: c.id, sideEffect: "tree" as const, keys });
    }
    // what the process did before it died: c1 and c4 landed; c3's key was written by someone else since
    await tree.set(k("landed"), str("new"));
    await tree.del(k("gone"));
    await tree.set(k("moved"), str("someone else's"));
    await interrupted("res5", calls, started);
    const versions = async () =>
      Object.fromEntries(
        await Promise.all(
          ["landed", "pending", "moved"].map(async (n) => [n, (await tree.get(k(n)))?.version]),
        ),
      );
    const was = await versions();
    fake.script({ text: "keys settled" });

    const r = await bs.agent.resumeRun({ vid: "res5" });

    expect(r.resumed).toEqual([
      { id: "c1", name: "tree.set", decision: "applied" },
      { id: "c2", name: "tree.set", decision: "rerun" },
      { id: "c3", name: "tree.set", decision: "key_changed" },
      { id: "c4", name: "tree.del", decision: "applied" },
      { id: "c5", name: "tree.set", decision: "rerun" },
    ]);
    // the landed write was not made twice, the changed key kept the other writer's value
    expect(await versions()).toEqual({
      landed: was.landed,
      pending: (was.pending ?? 0) + 1,
      moved: was.moved,
    });
    expect(await tree.get(k("pending"))).toMatchObject({ value: { value: "new" } });
    expect(await tree.get(k("moved"))).toMatchObject({ value: { value: "someone else's" } });
    expect(await tree.get(k("fresh"))).toMatchObject({ version: 1, value: { value: { n: 1 } } });
    const told = fake.requests.at(-1)?.messages.filter((m) => m.role === "tool") ?? [];
    expect(told.map((m) => (m.role === "tool" ? m.text : ""))).toEqual([
      expect.stringMatching(/had already been applied .*every key it writes holds what the call intended/),
      expect.stringMatching(/^Set \/scratch\/res5\/pending/),
      expect.stringMatching(/\/scratch\/res5\/moved has changed since .* It was not run again/),
      expect.stringMatching(/had already been applied/),
      expect.stringMatching(/^Set \/scratch\/res5\/fresh/),
    ]);
  });

  it("a tree write's record, committed with its write, plans no key hashes; its done record says it was a tree write", async () => {
    fake.script(
      { toolCalls: [{ id: "t1", name: "tree.set", args: { key: "/scratch/res6/a", value: "x" } }] },
      { text: "set" },
    );
    const r = await bs.agent.runTurn({ vid: "res6", input: "set it" });
    const rec = await tree.get(r.records[0] as string);
    expect(rec?.kind === "json" && rec.value.value).toMatchObject({ state: "done", sideEffect: "tree" });
    expect(rec?.kind === "json" && (rec.value.value as { keys?: unknown }).keys).toBeUndefined();
    // the record and the write were one commit: the record was created at the write's revision
    expect(rec?.createRev).toBe((await tree.get("/scratch/res6/a"))?.modRev);
  });

  it("finds a tree write whose record was committed with it applied, whatever its key holds since", async () => {
    const k = "/scratch/res-carried/k";
    await tree.set(k, str("written by the call"));
    const calls = [{ id: "c1", name: "tree.set", args: { key: k, value: "written by the call" } }];
    await interrupted("res-carried", calls, [{ id: "c1", sideEffect: "tree", withWrite: true }]);
    await tree.set(k, str("someone else's, since"));
    const version = (await tree.get(k))?.version;
    fake.script({ text: "settled" });

    const r = await bs.agent.resumeRun({ vid: "res-carried" });

    expect(r.resumed).toEqual([{ id: "c1", name: "tree.set", decision: "applied" }]);
    expect((await tree.get(k))?.version).toBe(version);
    const told = fake.requests.at(-1)?.messages.filter((m) => m.role === "tool") ?? [];
    expect(told.map((m) => (m.role === "tool" ? m.text : ""))).toEqual([
      expect.stringMatching(/had already been applied .*its record was committed with its write/),
    ]);
  });

  it("under resumeUnknown: ask, re-runs an unknown-outcome call only when a person approves, and asks again for a tool that needs approval", async () => {
    await withPolicy({ resumeUnknown: "ask", confirm: ["edit.write"] }, async () => {
      const calls = [
        { id: "c1", name: "shell.run", args: { command: "echo yes >> asked.log" } },
        { id: "c2", name: "shell.run", args: { command: "echo no >> asked.log" } },
        { id: "c3", name: "edit.write", args: { path: "confirmed.txt", text: "ok\n" } },
      ];
      await interrupted("res7", calls, [
        { id: "c1", sideEffect: "other" },
        { id: "c2", sideEffect: "other" },
        {
          id: "c3",
          sideEffect: "files",
          files: [{ path: join(bs.runtime.workspace, "confirmed.txt"), before: null, after: sha("ok\n") }],
        },
      ]);
      const answers = ["approve", "deny", "approve"] as const;
      const asked: string[] = [];
      fake.script({ text: "asked" });

      const r = await bs.agent.resumeRun({
        vid: "res7",
        onEvent(e) {
          if (e.type !== "approval_pending") return;
          asked.push(e.key);
          const decision = answers[asked.length - 1] ?? "deny";
          void bs.runtime.approvals.decide(e.key, { decision, reason: "test" }, "person (test)");
        },
      });

      expect(r.resumed).toEqual([
        { id: "c1", name: "shell.run", decision: "approved", approval: asked[0] },
        { id: "c2", name: "shell.run", decision: "declined", approval: asked[1] },
        { id: "c3", name: "edit.write", decision: "rerun", approval: asked[2] },
      ]);
      expect(await readFile(join(workspace, "asked.log"), "utf8")).toBe("yes\n");
      expect(await readFile(join(workspace, "confirmed.txt"), "utf8")).toBe("ok\n");
      const entries = await Promise.all(asked.map((key) => bs.runtime.approvals.read(key)));
      expect(entries.map((e) => [e?.tool, e?.state, e?.interrupted])).toEqual([
        ["shell.run", "approved", true],
        ["shell.run", "denied", true],
        ["edit.write", "approved", undefined],
      ]);
      expect(entries[0]?.reason).toMatch(/was interrupted .* whether it took effect is unknown/);
      const told = fake.requests.at(-1)?.messages.filter((m) => m.role === "tool") ?? [];
      expect(told[1]?.role === "tool" && told[1].text).toMatch(
        /whether it took effect is unknown\. A person was asked whether to run it again and did not approve \(test\)/,
      );
      // every started record is settled at its key, the declined one with its approval
      const recs = (await tree.list(recordsDir("res7"))).children.map(
        (c) => (c.kind === "json" ? c.value?.value : undefined) as { state: string; approval?: string },
      );
      expect(recs.map((x) => [x.state, x.approval])).toEqual([
        ["done", asked[0]],
        ["done", asked[1]],
        ["done", asked[2]],
      ]);
    });
  });

  it("refuses a run another live process holds, and takes one whose holder is gone", async () => {
    await interrupted("res2", [{ id: "c1", name: "edit.read", args: { path: "read.txt" } }], []);
    const lease = (pid: number) =>
      json({ host: hostname(), pid, id: "someone-else", expires: Date.now() + 60_000 });
    await tree.set(leaseKey("res2"), lease(process.ppid));
    const busy = await agentFailure(bs.agent.resumeRun({ vid: "res2" }));
    expect(busy.code).toBe("AGENT_RUN_BUSY");
    expect((await listRuns(tree, { status: "running" })).runs.map((x) => x.vid)).toContain("res2");
    expect(await markInterrupted(tree)).not.toContain("res2");

    await tree.set(leaseKey("res2"), lease(2 ** 22 + 12345)); // beyond pid_max: no such process
    expect(await markInterrupted(tree)).toContain("res2");
    const listed = (await listRuns(tree, { status: "interrupted" })).runs.find((x) => x.vid === "res2");
    expect(listed).toMatchObject({ status: "interrupted", resume: "byteseek run --resume res2" });
    fake.script({ text: "read it" });
    const r = await bs.agent.resumeRun({ vid: "res2" });
    expect(r.resumed).toEqual([{ id: "c1", name: "edit.read", decision: "not_started" }]);
    expect(await tree.get(leaseKey("res2"))).toBeUndefined();
  });

  it("refuses to resume a run that ended, and one that never was", async () => {
    fake.script({ text: "hi" });
    await bs.agent.runTurn({ vid: "res3", input: "hello" });
    expect((await agentFailure(bs.agent.resumeRun({ vid: "res3" }))).code).toBe("AGENT_NOT_INTERRUPTED");
    expect((await agentFailure(bs.agent.resumeRun({ vid: "nosuch" }))).code).toBe("AGENT_RUN_NOT_FOUND");
    const done = (await listRuns(tree, { status: "done" })).runs.find((x) => x.vid === "res3");
    expect(done).toMatchObject({ steps: 1, calls: 0 });
    expect(done?.started).toBeGreaterThan(0);
  });

  it("lists runs with kvspace runs, filtered by status, with the command that resumes an interrupted one", async () => {
    await interrupted("res4", [{ id: "c1", name: "shell.run", args: { command: "true" } }], []);
    const kvspace = (args: string[]) =>
      runInProcess(args, { env: {} }, { openStore: async () => unclosed(tree), seed: async () => {} });
    const all = await kvspace(["runs"]);
    expect(all.code).toBe(0);
    const lines = all.stdout
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
    expect(lines.find((l) => l[0] === "res3")).toEqual([
      "res3",
      expect.stringMatching(/^\d{4}-/),
      "1",
      "0",
      expect.stringMatching(/^\d+\+\d+$/),
      "done",
    ]);
    expect(lines.find((l) => l[0] === "res4")?.[5]).toBe("interrupted");
    expect(all.stderr).toContain("resume: byteseek run --resume res4");
    const only = await kvspace(["runs", "--status", "interrupted"]);
    expect(
      only.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("\t")[5]),
    ).toEqual(expect.arrayContaining(["interrupted"]));
    expect(only.stdout).not.toMatch(/\tdone$/m);
    expect((await kvspace(["runs", "--status", "paused"])).code).toBe(2);
  });

  it("resumes over HTTP and lists runs there, the statuses checked by the same schema", async () => {
    const app = await buildApp({ tree, logger: silent, runtime: bs.runtime, agent: bs.agent, web: false });
    try {
      const listed = await app.inject({ method: "GET", url: "/v1/agent/runs?status=interrupted" });
      expect(listed.statusCode).toBe(200);
      const runs = (listed.json() as { runs: Array<{ vid: string; status: string }> }).runs;
      expect(runs.map((r) => r.vid)).toContain("res4");
      expect(runs.every((r) => r.status === "interrupted")).toBe(true);
      expect((await app.inject({ method: "GET", url: "/v1/agent/runs?status=paused" })).statusCode).toBe(400);

      fake.script({ text: "resumed over http" });
      const res = await app.inject({ method: "POST", url: "/v1/agent/runs/res4/resume", payload: {} });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        vid: "res4",
        reason: "done",
        text: "resumed over http",
        resumed: [{ id: "c1", name: "shell.run", decision: "not_started" }],
      });
      const again = await app.inject({ method: "POST", url: "/v1/agent/runs/res4/resume", payload: {} });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toMatchObject({ error: { code: "AGENT_NOT_INTERRUPTED" } });
    } finally {
      await app.close();
    }
  });
});
