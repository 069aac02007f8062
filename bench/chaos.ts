/**
 * The durability bench of issue 32: many scripted runs driven by a process that is SIGKILLed again
 * and again (BYTESEEK_KILL_AT: between a call's intent and its effect, or between its effect and
 * its record, at a random call), each new process resuming every run left unfinished, until all are
 * done. Every process drives all unfinished runs at once (as a server does), so one kill interrupts
 * every run in flight. Each run's plan: an edit.write, a mark (a built-in appending one line to a
 * file: an effect whose outcome cannot be checked), an http call to a local counter, a tree.set, an
 * edit.replace, a second tree.set, a second http call, a second mark, then the answer.
 *
 * Counted at the end, from the effects themselves: effects done twice (a mark line written twice, an
 * http call's tag arriving under two idempotency keys, a tree key at a version beyond its writes, an
 * edit not as intended) — bar 0; unknown outcomes reported (each call a resume settled as `unknown`
 * has the model's message saying so) — bar 100%; resume latency (resumeRun to its next model step,
 * with every unfinished run resuming at once) p50/p99.
 *
 * Run: npm run build && node dist/bench/chaos.js [--runs 200] [--kills 2000] [--quick]
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { appendFileSync, closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import type { AgentEvent } from "../agent/events.js";
import { killAt } from "../agent/kill-at.js";
import { createAgent } from "../agent/loop.js";
import type { ChatMessage, ChatRequest, ChatResponse, Provider } from "../agent/providers/types.js";
import { sessionDir } from "../agent/run-keys.js";
import { createBuiltins, seedStore } from "../compose/byteseek.js";
import { POLICY_KEY } from "../tools/gate/policy.js";
import { readRecord, recordsDir } from "../tools/records/records.js";
import { createRuntime } from "../tools/runtime.js";
import type { BuiltinTool } from "../tools/types.js";
import { openTree } from "../tree/index.js";
import { type Json, json } from "../tree/value.js";
import { median, percentile, printTable } from "./report.js";

const SELF = fileURLToPath(import.meta.url);
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};

/** The mark: one line appended to a file per execution, declared with no intent (its outcome is unknown when interrupted). */
function markTool(file: string): BuiltinTool {
  return {
    ref: "bench.mark",
    declaration: {
      name: "bench.mark",
      description: "appends a line to the marks file",
      snippet: "mark a line",
      params: { type: "object", properties: { line: { type: "string" } }, required: ["line"] },
      impl: { kind: "builtin", ref: "bench.mark" },
    },
    async execute(args) {
      appendFileSync(file, `${String(args.line)}\n`);
      return { text: "marked" };
    },
  };
}

/** A run's calls, in order; then it answers. */
function plan(vid: string): Array<{ name: string; args: Record<string, unknown> }> {
  const path = `${vid}.txt`;
  return [
    { name: "edit.write", args: { path, text: "one\n" } },
    { name: "bench.mark", args: { line: `${vid}/c1` } },
    { name: "count.add", args: { tag: `${vid}/c2` } },
    { name: "tree.set", args: { key: `/bench/${vid}/n`, value: 1 } },
    { name: "edit.replace", args: { path, old: "one", new: "two" } },
    { name: "tree.set", args: { key: `/bench/${vid}/n`, value: 2 } },
    { name: "count.add", args: { tag: `${vid}/c6` } },
    { name: "bench.mark", args: { line: `${vid}/c7` } },
  ];
}

/** The model: the next call of the run's plan by how many results it has seen, then the answer. */
const model: Provider = {
  api: "openai",
  model: "scripted",
  async complete(req: ChatRequest): Promise<ChatResponse> {
    const user = req.messages.find((m) => m.role === "user");
    const vid = user?.role === "user" ? user.content : "";
    const seen = req.messages.filter((m) => m.role === "tool").length;
    const next = plan(vid)[seen];
    const usage = { inputTokens: 100, outputTokens: 10 };
    return next
      ? {
          text: "",
          toolCalls: [{ id: `c${seen}`, name: next.name, argsText: JSON.stringify(next.args) }],
          stopReason: "tool_calls",
          usage,
        }
      : { text: "done", toolCalls: [], stopReason: "stop", usage };
  },
  async close() {},
};

interface Paths {
  db: string;
  ws: string;
  marks: string;
  stats: string;
}

/** One process: drives every listed run (a new turn, or a resume) at once, writing what it saw to the stats file. */
async function child(paths: Paths, vids: string[]): Promise<void> {
  const logger = pino({ level: "silent" });
  const tree = await openTree({ backend: "classic", location: paths.db });
  const failpoint = killAt(process.env.BYTESEEK_KILL_AT);
  const runtime = createRuntime({
    tree,
    builtins: [...createBuiltins(), markTool(paths.marks)],
    logger,
    workspace: paths.ws,
    ...(failpoint ? { failpoint } : {}),
  });
  const agent = createAgent({ tree, runtime, logger, provider: async () => model });
  const out = openSync(paths.stats, "a");
  // written synchronously: a SIGKILL loses nothing already said
  const say = (o: Record<string, unknown>) => writeSync(out, `${JSON.stringify(o)}\n`);
  /** Resumes (or starts) one run; `settled` is told when its interrupted calls are settled (its next step, or its end). */
  async function drive(vid: string, alone: boolean, settled: () => void): Promise<void> {
    const t0 = performance.now();
    let latency: number | undefined;
    const onEvent = (e: AgentEvent) => {
      if (latency !== undefined || (e.type !== "step" && e.type !== "turn_end")) return;
      latency = performance.now() - t0;
      say({ vid, resumeMs: latency, alone });
      settled();
    };
    try {
      const r = await agent.resumeRun({ vid, onEvent });
      say({ vid, end: r.reason });
    } catch (err) {
      settled();
      const code = (err as { code?: string }).code;
      if (code === "AGENT_NOT_INTERRUPTED") {
        say({ vid, end: "done" });
        return;
      }
      if (code !== "AGENT_RUN_NOT_FOUND") throw err;
      const r = await agent.runTurn({ vid, input: vid });
      say({ vid, end: r.reason });
    }
  }
  // the first run alone until its calls are settled (a resume in a process doing nothing else), then all the others at once
  const [first, ...rest] = vids;
  const runs: Array<Promise<void>> = [];
  if (first !== undefined) await new Promise<void>((settled) => runs.push(drive(first, true, settled)));
  runs.push(...rest.map((vid) => drive(vid, false, () => {})));
  await Promise.all(runs);
  closeSync(out);
  await runtime.close();
  await tree.close();
}

/** CPU seconds (user + system) of this process's children that ended, from /proc (Linux; clock ticks of 1/100 s). */
function childrenCpuS(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? [];
  // after "pid (comm) ": state is field 3, cutime 16 and cstime 17 → indexes 13 and 14 here
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

interface Said {
  vid: string;
  end?: string;
  /** ms from resumeRun to its next step (its interrupted calls settled); `alone`: the process's first resume, before any other run starts. */
  resumeMs?: number;
  alone?: boolean;
}

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const RUNS = arg("runs", quick ? 40 : 200);
  const KILLS = arg("kills", quick ? 400 : 2000);
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-chaos-"));
  const paths: Paths = {
    db: join(dir, "db"),
    ws: join(dir, "ws"),
    marks: join(dir, "marks.txt"),
    stats: join(dir, "stats.ndjson"),
  };
  await mkdir(paths.ws);
  // the counter: every request's idempotency key and the call it names (its tag)
  const arrivals: Array<{ key: string; tag: string }> = [];
  const counter = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      const tag = String((JSON.parse(body || "{}") as { tag?: unknown }).tag);
      arrivals.push({ key: String(req.headers["idempotency-key"]), tag });
      res.end('{"ok":true}');
    });
  });
  counter.listen(0, "127.0.0.1");
  await once(counter, "listening");
  const port = (counter.address() as AddressInfo).port;
  try {
    const setup = await openTree({ backend: "classic", location: paths.db });
    await seedStore(setup, { builtins: [...createBuiltins(), markTool(paths.marks)] });
    await setup.set(
      "/byteseek/tools/count.add",
      json({
        name: "count.add",
        description: "adds one to the counter",
        snippet: "add one",
        params: { type: "object", properties: { tag: { type: "string" } } },
        impl: { kind: "http", url: `http://127.0.0.1:${port}/add`, method: "POST" },
      }),
    );
    const policy = await setup.get(POLICY_KEY);
    const value = (policy?.kind === "json" ? policy.value.value : {}) as Record<string, Json>;
    const grants = (value.grants ?? {}) as Record<string, Json>;
    const def = (grants.default ?? {}) as Record<string, Json>;
    await setup.set(
      POLICY_KEY,
      json({ ...value, grants: { ...grants, default: { ...def, net: [`127.0.0.1:${port}`] } } }),
      { ro: true, force: true },
    );
    await setup.close();

    const vids = Array.from({ length: RUNS }, (_, i) => `b${String(i).padStart(4, "0")}`);
    const done = new Set<string>();
    let processes = 0;
    let kills = 0;
    let interrupted = 0;
    const cpu0 = childrenCpuS();
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    while (done.size < RUNS) {
      const open = vids.filter((v) => !done.has(v));
      const killing = interrupted < KILLS;
      const n = 1 + Math.floor(Math.random() * Math.min(200, 2 * open.length));
      const point = `${Math.random() < 0.5 ? "effect" : "record"}:${n}`;
      const proc = spawn(process.execPath, [SELF, "--child", JSON.stringify(paths), JSON.stringify(open)], {
        env: { ...process.env, ...(killing ? { BYTESEEK_KILL_AT: point } : {}) },
        stdio: ["ignore", "ignore", "inherit"],
      });
      const [code, signal] = (await once(proc, "close")) as [number | null, NodeJS.Signals | null];
      processes++;
      const before = done.size;
      for (const l of readFileSync(paths.stats, "utf8").split("\n"))
        if (l) {
          const s = JSON.parse(l) as Said;
          if (s.end === "done") done.add(s.vid);
        }
      if (signal === "SIGKILL") {
        kills++;
        interrupted += open.length - (done.size - before);
      } else if (code !== 0) throw new Error(`a bench process failed (exit ${code})`);
      if (processes > 20 * (KILLS / 10 + 10)) throw new Error("the runs do not finish");
    }
    const wallS = (performance.now() - t0) / 1000;
    const childCpu = childrenCpuS() - cpu0;
    const own = process.cpuUsage(own0);
    const ownCpu = (own.user + own.system) / 1e6;

    // what happened, from the effects
    const said = readFileSync(paths.stats, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Said);
    const alone = said.filter((x) => x.resumeMs !== undefined && x.alone).map((x) => x.resumeMs as number);
    const together = said
      .filter((x) => x.resumeMs !== undefined && !x.alone)
      .map((x) => x.resumeMs as number);
    const marks = readFileSync(paths.marks, "utf8").split("\n").filter(Boolean);
    const markCounts = new Map<string, number>();
    for (const m of marks) markCounts.set(m, (markCounts.get(m) ?? 0) + 1);
    const dupMarks = [...markCounts.values()].filter((c) => c > 1).length;
    const keysByTag = new Map<string, Set<string>>();
    for (const a of arrivals) keysByTag.set(a.tag, (keysByTag.get(a.tag) ?? new Set()).add(a.key));
    const dupHttp = [...keysByTag.values()].filter((k) => k.size > 1).length;
    const resent = arrivals.length - keysByTag.size;
    const tree = await openTree({ backend: "classic", location: paths.db });
    let dupTree = 0;
    let badEdits = 0;
    // every call a resume settled as of unknown outcome (its record says so), and whether the model was told
    let unknown = 0;
    let reported = 0;
    const decisions = new Map<string, number>();
    for (const vid of vids) {
      const n = await tree.get(`/bench/${vid}/n`);
      if ((n?.version ?? 0) > 2) dupTree++;
      let text = "";
      try {
        text = readFileSync(join(paths.ws, `${vid}.txt`), "utf8");
      } catch {}
      if (text !== "two\n") badEdits++;
      const records = await tree.list(recordsDir(vid), { limit: 1000 });
      const session = await tree.list(sessionDir(vid), { limit: 1000 });
      const told = session.children
        .map((c) => (c.kind === "json" ? (c.value?.value as unknown as ChatMessage) : undefined))
        .filter((m): m is Extract<ChatMessage, { role: "tool" }> => m?.role === "tool");
      for (const c of records.children) {
        const rec = c.kind === "index" ? undefined : readRecord(c.key, c);
        const resumed = rec?.details.resumed;
        if (typeof resumed === "string") decisions.set(resumed, (decisions.get(resumed) ?? 0) + 1);
        if (rec?.details.code !== "outcome_unknown") continue;
        unknown++;
        const id = rec.origin?.id;
        if (told.some((m) => m.toolCallId === id && /whether it took effect is unknown/.test(m.content)))
          reported++;
      }
    }
    await tree.close();

    console.log(
      `${RUNS} runs of 8 calls, ${processes} processes, ${kills} SIGKILLs interrupting runs ${interrupted} times (every unfinished run is in flight in each process), ${wallS.toFixed(0)} s wall\n`,
    );
    printTable(
      ["figure", "value", "bar"],
      [
        ["effects done twice: marks written twice", String(dupMarks), "0"],
        ["effects done twice: http calls under two idempotency keys", String(dupHttp), "0"],
        ["effects done twice: tree keys written beyond their writes", String(dupTree), "0"],
        ["edits not as intended at the end", String(badEdits), "0"],
        ["http calls resent with their own key (deduplicated by the server)", String(resent), ""],
        [
          "unknown outcomes reported to the model",
          `${reported}/${unknown} (${unknown ? ((100 * reported) / unknown).toFixed(0) : "100"}%)`,
          "100%",
        ],
        [
          `resume latency p50 / p99 ms, a process's first resume alone (cold; ${alone.length})`,
          `${median(alone).toFixed(1)} / ${percentile(alone, 99).toFixed(1)}`,
          "p50 ≤ 50 ms",
        ],
        [
          `resume latency p50 / p99 ms, the other runs resuming at once (${together.length})`,
          `${median(together).toFixed(1)} / ${percentile(together, 99).toFixed(1)}`,
          "",
        ],
        [
          "interrupted calls settled without running, by record",
          [...decisions].map(([d, c]) => `${d} ${c}`).join(", "),
          "",
        ],
        [
          "CPU s: the killed and resumed processes / this one (the counter)",
          `${childCpu.toFixed(1)} / ${ownCpu.toFixed(1)}`,
          "",
        ],
      ],
    );
  } finally {
    counter.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child")
  await child(
    JSON.parse(process.argv[3] as string) as Paths,
    JSON.parse(process.argv[4] as string) as string[],
  );
else await main();
