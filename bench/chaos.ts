/**
 * The durability bench of issue 32: many scripted runs whose processes are SIGKILLed thousands of
 * times. Each process (bench/chaos-worker.ts: a small entry that opens the store and drives a few
 * runs) gets the next few unfinished runs — resumed where their last process died, or started —
 * and is killed at a random point: between a call's intent and its effect or between its effect
 * and its record (BYTESEEK_KILL_AT at one of its first calls), or by this process after a random
 * delay once it is ready (anywhere: taking the lease, reading the session, a commit). Then the next
 * process; once the kills are spent, one last process finishes every run left. Each run's plan: an
 * edit.write, a mark (a built-in appending one line to a file: an effect whose outcome cannot be
 * checked), an http call to a local counter, a tree.set, an edit.replace, a second tree.set, a
 * second http call, a second mark, then the answer (bench/chaos-plan.ts).
 *
 * Counted at the end, from the effects themselves: effects done twice (a mark line written twice,
 * an http call's tag arriving under two idempotency keys, a tree key at a version beyond its
 * writes, an edit not as intended) — bar 0; unknown outcomes reported (each call a resume settled
 * as `unknown` has the model's message saying so) — bar 100%; a fresh process's first resume
 * (resumeRun to its next model step), wall and CPU. Most of the CPU is the processes' start (node
 * and the modules a run needs): measure it with a small --kills first.
 *
 * Run: npm run build && node dist/bench/chaos.js [--runs 200] [--kills 2000] [--lanes 2] [--per 1] [--seconds S] [--quick]
 * (--lanes: separate stores driven side by side, one a core; --per: runs a process drives — with 3,
 * a run of 8 calls finishes after ~6 kills, so 200 runs end before 2,000 kills)
 * (--seconds: no new kill after S seconds; the runs left are then finished by one last process)
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { Said } from "./chaos-plan.js";
import { childrenCpuS, openChaosWorld, type Tally, tallyEffects } from "./chaos-store.js";
import { median, percentile, printTable } from "./report.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};

/** The lines a file gained since the last read. */
function tail(file: string): () => Said[] {
  let offset = 0;
  let rest = "";
  return () => {
    const fd = openSync(file, "a+");
    const buf = Buffer.alloc(1 << 16);
    try {
      for (
        let n = readSync(fd, buf, 0, buf.length, offset);
        n > 0;
        n = readSync(fd, buf, 0, buf.length, offset)
      ) {
        offset += n;
        rest += buf.toString("utf8", 0, n);
      }
    } finally {
      closeSync(fd);
    }
    const lines = rest.split("\n");
    rest = lines.pop() ?? "";
    return lines.filter(Boolean).map((l) => JSON.parse(l) as Said);
  };
}

/** Resolves once the worker says it is ready (its store open), or ends. */
function ready(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    proc.stdout?.on("data", (c: Buffer) => {
      if (c.toString().includes("ready")) resolve();
    });
    proc.on("close", () => resolve());
  });
}

/** What one lane (a store, a counter, its share of the runs and kills) saw. */
interface Lane {
  processes: number;
  kills: number;
  interrupted: number;
  points: { effect: number; record: number; timer: number };
  firsts: Array<{ ms: number; cpu: number }>;
  tally: Tally;
}

/**
 * One lane: its own store and counter; processes one after another, each driving the next few
 * unfinished runs and killed, until its kills are spent (or its time), then one process finishes
 * every run left.
 */
async function lane(vids: string[], KILLS: number, PER: number, deadline: number): Promise<Lane> {
  const world = await openChaosWorld("byteseek-bench-chaos-");
  try {
    const done = new Set<string>();
    const firsts: Lane["firsts"] = [];
    const news = tail(world.paths.stats);
    const points = { effect: 0, record: 0, timer: 0 };
    let processes = 0;
    let kills = 0;
    let interrupted = 0;
    let cursor = 0;
    const begun = new Set<string>();
    while (done.size < vids.length) {
      const open = vids.filter((v) => !done.has(v));
      // the kills stop at their count, or once the time allowed for them is spent (this machine is shared)
      const killing = kills < KILLS && performance.now() < deadline;
      // the next few unfinished runs, in turn, so the kills spread over all of them; first one that
      // a killed process left (so each process's first drive is a resume, timed), then new ones
      const behind = open.filter((v) => begun.has(v));
      const head = behind.length > 0 ? [behind[kills % behind.length] as string] : [];
      const rest = open.filter((v) => !head.includes(v));
      const mine = killing
        ? [
            ...head,
            ...Array.from(
              { length: Math.min(PER - head.length, rest.length) },
              (_, i) => rest[(cursor + i) % rest.length] as string,
            ),
          ]
        : open;
      cursor = (cursor + mine.length - head.length) % Math.max(1, rest.length);
      for (const v of mine) begun.add(v);
      const how = killing
        ? (["effect", "record", "timer"] as const)[Math.floor(Math.random() * 3)]
        : undefined;
      const env: Record<string, string> =
        how === "effect" || how === "record"
          ? { BYTESEEK_KILL_AT: `${how}:${1 + Math.floor(Math.random() * (mine.length + 1))}` }
          : {};
      const proc = world.worker(mine, { env });
      const closed = once(proc, "close") as Promise<[number | null, NodeJS.Signals | null]>;
      if (how === "timer") {
        await ready(proc);
        const timer = setTimeout(() => proc.kill("SIGKILL"), Math.random() * 40);
        void closed.then(() => clearTimeout(timer));
      }
      const [code, signal] = await closed;
      processes++;
      const ended = new Set<string>();
      for (const s of news()) {
        if (s.end === "done") {
          done.add(s.vid);
          ended.add(s.vid);
        }
        if (s.first && s.resumeMs !== undefined) firsts.push({ ms: s.resumeMs, cpu: s.cpuMs ?? 0 });
      }
      if (signal === "SIGKILL") {
        kills++;
        if (how) points[how]++;
        interrupted += mine.filter((v) => !ended.has(v)).length;
      } else if (code !== 0) throw new Error(`a bench process failed (exit ${code})`);
      if (processes > 3 * KILLS + 100) throw new Error("the runs do not finish");
    }
    return { processes, kills, interrupted, points, firsts, tally: await tallyEffects(world, vids) };
  } finally {
    await world.close();
  }
}

/** The lanes' figures added up. */
function sum(lanes: Lane[]): Lane {
  const add = (f: (l: Lane) => number) => lanes.reduce((n, l) => n + f(l), 0);
  const decisions = new Map<string, number>();
  for (const l of lanes)
    for (const [d, c] of l.tally.decisions) decisions.set(d, (decisions.get(d) ?? 0) + c);
  return {
    processes: add((l) => l.processes),
    kills: add((l) => l.kills),
    interrupted: add((l) => l.interrupted),
    points: {
      effect: add((l) => l.points.effect),
      record: add((l) => l.points.record),
      timer: add((l) => l.points.timer),
    },
    firsts: lanes.flatMap((l) => l.firsts),
    tally: {
      dupMarks: add((l) => l.tally.dupMarks),
      dupHttp: add((l) => l.tally.dupHttp),
      dupTree: add((l) => l.tally.dupTree),
      badEdits: add((l) => l.tally.badEdits),
      resent: add((l) => l.tally.resent),
      unknown: add((l) => l.tally.unknown),
      reported: add((l) => l.tally.reported),
      decisions,
    },
  };
}

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const RUNS = arg("runs", quick ? 40 : 200);
  const KILLS = arg("kills", quick ? 100 : 2000);
  const PER = arg("per", 1);
  const LANES = Math.max(1, arg("lanes", 2));
  const SECONDS = arg("seconds", Number.POSITIVE_INFINITY);
  const vids = Array.from({ length: RUNS }, (_, i) => `b${String(i).padStart(4, "0")}`);
  const cpu0 = childrenCpuS();
  const own0 = process.cpuUsage();
  const t0 = performance.now();
  // lanes: separate stores and counters driven side by side, the runs and kills shared out
  const lanes = await Promise.all(
    Array.from({ length: LANES }, (_, i) =>
      lane(
        vids.filter((_, j) => j % LANES === i),
        Math.floor(KILLS / LANES) + (i < KILLS % LANES ? 1 : 0),
        PER,
        t0 + 1000 * SECONDS,
      ),
    ),
  );
  const { processes, kills, interrupted, points, firsts, tally: t } = sum(lanes);
  const wallS = (performance.now() - t0) / 1000;
  const childCpu = childrenCpuS() - cpu0;
  const own = process.cpuUsage(own0);
  const ownCpu = (own.user + own.system) / 1e6;
  const ms = firsts.map((f) => f.ms);
  const cpu = firsts.map((f) => f.cpu);
  const short =
    kills >= KILLS
      ? ""
      : performance.now() - t0 >= 1000 * SECONDS
        ? `kills stopped after ${SECONDS} s (of ${KILLS} asked), `
        : `the runs finished after ${kills} kills (of ${KILLS} asked: give more --runs or fewer --per), `;

  console.log(
    `${RUNS} runs of 8 calls in ${LANES} lanes, ${PER} runs a process, ${short}${wallS.toFixed(0)} s wall; CPU s: the workers ${childCpu.toFixed(1)} (${((1000 * childCpu) / processes).toFixed(0)} ms a process), this one (the counters) ${ownCpu.toFixed(1)}\n`,
  );
  printTable(
    ["figure", "value", "bar"],
    [
      [
        "processes / SIGKILLs / run interruptions",
        `${processes} / ${kills} / ${interrupted}`,
        "≥ 200 runs, ≥ 2,000 kills",
      ],
      [
        "kill points: intent→effect / effect→record / timer",
        `${points.effect} / ${points.record} / ${points.timer}`,
        "",
      ],
      ["effects done twice: marks written twice", String(t.dupMarks), "0"],
      ["effects done twice: http calls under two idempotency keys", String(t.dupHttp), "0"],
      ["effects done twice: tree keys written beyond their writes", String(t.dupTree), "0"],
      ["edits not as intended at the end", String(t.badEdits), "0"],
      ["http calls resent with their own key (deduplicated by the server)", String(t.resent), ""],
      [
        "unknown outcomes reported to the model",
        `${t.reported}/${t.unknown} (${t.unknown ? ((100 * t.reported) / t.unknown).toFixed(0) : "100"}%)`,
        "100%",
      ],
      [
        "interrupted calls settled without running, by record",
        [...t.decisions].map(([d, c]) => `${d} ${c}`).join(", "),
        "",
      ],
      [
        `a fresh process's first resume, p50 / p99 ms wall (${ms.length})`,
        `${median(ms).toFixed(1)} / ${percentile(ms, 99).toFixed(1)}`,
        "",
      ],
      [`the same, CPU ms`, `${median(cpu).toFixed(1)} / ${percentile(cpu, 99).toFixed(1)}`, ""],
    ],
  );
}

await main();
