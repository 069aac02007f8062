/**
 * Chaos: a scripted run (an edit, a shell append to a log, an http call to a counter, a second
 * edit) whose `byteseek run` process is SIGKILLed at chosen points — between a call's intent and
 * its effect, and between its effect and its record (BYTESEEK_KILL_AT) — and resumed with
 * `byteseek run --resume` until it is done. Every completed effect happened exactly once, the
 * command whose outcome was unknown was reported as such and never run again, and the workspace
 * equals an uninterrupted run's wherever no outcome was unknown. The same on the etcd engine, where
 * the run's lease is an etcd lease (a killed process's is given up by its dead pid, or expires).
 * Needs `npm run build`.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { declareCounter } from "../../bench/chaos-store.js";
import { seedStore } from "../../compose/byteseek.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { type EtcdCluster, startEtcd } from "../etcd/etcd-process.js";
import { type FakeLlm, type FakeRequest, startFakeLlm } from "../fake-llm/server.js";
import { tempDir } from "../tools/helpers.js";
import { BYTESEEK_BIN, needBuiltCli } from "./helpers.js";

let fake: FakeLlm;
let etcd: EtcdCluster;
let dir: { path: string; remove(): Promise<void> };
const keys: string[] = [];
const counter = createServer((req, res) => {
  keys.push(String(req.headers["idempotency-key"]));
  req.resume();
  req.on("end", () => res.end(`{"count":${new Set(keys).size}}`));
});
let port = 0;

/** The model's plan: one call per step, chosen by how many results it has seen; then it is done. */
const PLAN = [
  { name: "edit.write", args: { path: "a.txt", text: "one\n" } },
  { name: "shell.run", args: { command: "echo line >> log.txt" } },
  { name: "count.add", args: {} },
  { name: "edit.replace", args: { path: "a.txt", old: "one", new: "two" } },
];
function planned(req: FakeRequest) {
  const seen = req.messages.filter((m) => m.role === "tool").length;
  const next = PLAN[seen];
  return next ? { toolCalls: [{ ...next, id: `c${seen}` }] } : { text: "all done" };
}

type Engine = "classic" | "etcd";

/** A fresh store: a folder, or a prefix of its own in the shared etcd. */
async function openStore(engine: Engine, name: string): Promise<{ tree: Tree; kvspace: string }> {
  if (engine === "classic") {
    const db = join(dir.path, name, "db");
    return { tree: await openTree({ backend: "classic", location: db }), kvspace: db };
  }
  const prefix = `${name}/`;
  return {
    tree: await createEtcdTree({ endpoints: etcd.endpoints, prefix }),
    kvspace: `etcd://${etcd.endpoints.join(",")}/${prefix}`,
  };
}

/** A fresh store and workspace with the counter tool declared and its host granted. */
async function prepare(
  name: string,
  engine: Engine = "classic",
): Promise<{ env: NodeJS.ProcessEnv; ws: string }> {
  const ws = join(dir.path, name, "ws");
  await mkdir(ws, { recursive: true });
  const { tree, kvspace } = await openStore(engine, name);
  await seedStore(tree);
  await declareCounter(tree, port);
  await tree.close();
  return {
    ws,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KVSPACE: kvspace,
      BYTESEEK_WORKSPACE: ws,
      BYTESEEK_LLM_API: "openai",
      BYTESEEK_LLM_URL: `${fake.url}/v1`,
      BYTESEEK_LLM_MODEL: "fake-1",
    },
  };
}

/** Runs the CLI; answers its exit code, the signal that ended it, its stdout and stderr. */
async function byteseek(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BYTESEEK_BIN, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
  return { code, signal, stdout, stderr };
}

beforeAll(async () => {
  needBuiltCli();
  dir = await tempDir("byteseek-chaos-");
  etcd = await startEtcd();
  fake = await startFakeLlm();
  counter.listen(0, "127.0.0.1");
  await once(counter, "listening");
  port = (counter.address() as AddressInfo).port;
});
afterAll(async () => {
  await fake.close();
  counter.close();
  await etcd?.remove();
  await dir.remove();
});

describe("intents committed without an fsync of their own (BYTESEEK_SYNC=always)", () => {
  it("a run SIGKILLed right after an http call's intent finds it on resume and sends the call once, with its key", async () => {
    keys.length = 0;
    const plan = [
      { name: "tree.set", args: { key: "/chaos/k", value: "v" } },
      { name: "count.add", args: {} },
    ];
    const step = (req: FakeRequest) => {
      const seen = req.messages.filter((m) => m.role === "tool").length;
      const next = plan[seen];
      return next ? { toolCalls: [{ ...next, id: `c${seen}` }] } : { text: "all done" };
    };
    // exactly the model requests the two processes make (a step left over would answer the next test)
    fake.script(step, step, step);
    const { env } = await prepare("lazy-intent");
    const always: NodeJS.ProcessEnv = { ...env, BYTESEEK_SYNC: "always" };
    const first = await byteseek(["run", "go", "--vid", "lz1"], { ...always, BYTESEEK_KILL_AT: "effect:2" });
    expect(first.signal).toBe("SIGKILL");
    expect(keys).toEqual([]);
    // what the killed process left: both intents (neither synced on its own), the first call done
    const tree = await openTree({ backend: "classic", location: String(always.KVSPACE) });
    const record = async (n: number) => {
      const node = await tree.get(`/byteseek/tool/lz1/${n}`);
      return node?.kind === "json" ? (node.value.value as Record<string, unknown>) : undefined;
    };
    expect(await record(0)).toMatchObject({ name: "tree.set", state: "done", sideEffect: "tree" });
    expect(await record(1)).toMatchObject({ name: "count.add", state: "started", sideEffect: "http" });
    await tree.close();

    const resumed = await byteseek(["run", "--resume", "lz1"], always);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(keys).toEqual(["lz1/1"]);
    expect(fake.pending()).toBe(0);
    const after = await openTree({ backend: "classic", location: String(always.KVSPACE) });
    expect((await after.get("/chaos/k"))?.version).toBe(1);
    await after.close();
  }, 60_000);
});

describe("a run killed at chosen points and resumed until done", () => {
  it.each(["classic", "etcd"] as const)(
    "on %s, does each completed effect once, reports the unknown one and never re-runs it",
    async (engine) => {
      keys.length = 0;
      const ch1 = engine === "classic" ? "ch1" : "ch1e";
      fake.script(...Array.from({ length: 12 }, () => planned));
      const asked = fake.requests.length;
      const { env, ws } = await prepare(`chaos-${engine}`, engine);
      // 1: killed after the shell call's intent, before its effect
      const first = await byteseek(["run", "go", "--vid", ch1], { ...env, BYTESEEK_KILL_AT: "effect:2" });
      expect(first.signal).toBe("SIGKILL");
      // 2: the shell call is settled as unknown; the http call is killed after its effect, before its record
      const second = await byteseek(["run", "--resume", ch1], { ...env, BYTESEEK_KILL_AT: "record:1" });
      expect(second.signal).toBe("SIGKILL");
      expect(keys).toEqual([`${ch1}/2`]);
      // 3: the http call is sent again with its key; the second edit is killed before its record
      const third = await byteseek(["run", "--resume", ch1], { ...env, BYTESEEK_KILL_AT: "record:2" });
      expect(third.signal).toBe("SIGKILL");
      expect(keys).toEqual([`${ch1}/2`, `${ch1}/2`]); // sent again, with the same key
      // 4: the edit is found applied by its file hash; the run ends
      const last = await byteseek(["run", "--resume", ch1], env);
      expect(last.code).toBe(0);
      expect(last.stderr).toContain("resumed edit.replace (c3): applied");

      expect(await readFile(join(ws, "a.txt"), "utf8")).toBe("two\n");
      await expect(readFile(join(ws, "log.txt"), "utf8")).rejects.toThrow(); // unknown: never re-run
      expect(new Set(keys)).toEqual(new Set([`${ch1}/2`])); // the counter counted once
      const told = fake.requests
        .slice(asked)
        .flatMap((r) => r.messages)
        .filter((m) => m.role === "tool");
      expect(told.some((m) => m.role === "tool" && /whether it took effect is unknown/.test(m.text))).toBe(
        true,
      );

      // the same run uninterrupted: the same workspace, but for the log the unknown call would have written
      if (engine === "etcd") return; // the same plan as on classic-level, compared there
      keys.length = 0;
      fake.script(...Array.from({ length: 6 }, () => planned));
      const clean = await prepare("clean");
      const ran = await byteseek(["run", "go", "--vid", "ch2"], clean.env);
      expect(ran.code).toBe(0);
      expect(await readFile(join(clean.ws, "a.txt"), "utf8")).toBe("two\n");
      expect(await readFile(join(clean.ws, "log.txt"), "utf8")).toBe("line\n");
      expect(keys).toEqual(["ch2/2"]);

      // byteseek run --replay, as a process: no model request, no tool executed, the same display
      const requests = fake.requests.length;
      const replayed = await byteseek(["run", "--replay", "ch2"], clean.env);
      expect(replayed.code, replayed.stderr).toBe(0);
      const timeless = (text: string) => text.replace(/ in [\d.]+ m?s/g, " in … ms");
      expect(timeless(replayed.stdout)).toBe(timeless(ran.stdout));
      // and the run killed three times: its records pair with its calls by origin, whatever was retried
      const killed = await byteseek(["run", "--replay", ch1], env);
      expect(killed.code, killed.stderr).toBe(0);
      expect(killed.stdout).toContain("whether it took effect is unknown");
      expect(fake.requests.length).toBe(requests);
      expect(keys).toEqual(["ch2/2"]);
      expect(await readFile(join(clean.ws, "log.txt"), "utf8")).toBe("line\n");
      await expect(readFile(join(ws, "log.txt"), "utf8")).rejects.toThrow();
    },
    120_000, // five to seven CLI processes each: a loaded machine takes its time
  );
});
