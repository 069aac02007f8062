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
 * Run: npm run build && node dist/bench/chaos.js [--runs 200] [--kills 2000] [--per 3] [--seconds S] [--quick]
 * (--seconds: no new kill after S seconds; the runs left are then finished by one last process)
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readSync } from "node:fs";
import { performance } from "node:perf_hooks";
import type { Said } from "./chaos-plan.js";
import { childrenCpuS, openChaosWorld, tallyEffects } from "./chaos-store.js";
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

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const RUNS = arg("runs", quick ? 40 : 200);
  const KILLS = arg("kills", quick ? 100 : 2000);
  const PER = arg("per", 3);
  const SECONDS = arg("seconds", Number.POSITIVE_INFINITY);
  const world = await openChaosWorld("byteseek-bench-chaos-");
  try {
    const vids = Array.from({ length: RUNS }, (_, i) => `b${String(i).padStart(4, "0")}`);
    const done = new Set<string>();
    const firsts: Array<{ ms: number; cpu: number }> = [];
    const news = tail(world.paths.stats);
    const points = { effect: 0, record: 0, timer: 0 };
    let processes = 0;
    let kills = 0;
    let interrupted = 0;
    let cursor = 0;
    const begun = new Set<string>();
    const cpu0 = childrenCpuS();
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    while (done.size < RUNS) {
      const open = vids.filter((v) => !done.has(v));
      // the kills stop at their count, or once the time allowed for them is spent (this machine is shared)
      const killing = kills < KILLS && performance.now() - t0 < 1000 * SECONDS;
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
    const wallS = (performance.now() - t0) / 1000;
    const childCpu = childrenCpuS() - cpu0;
    const own = process.cpuUsage(own0);
    const ownCpu = (own.user + own.system) / 1e6;
    const t = await tallyEffects(world, vids);
    const ms = firsts.map((f) => f.ms);
    const cpu = firsts.map((f) => f.cpu);

    console.log(
      `${RUNS} runs of 8 calls, ${PER} runs a process, ${kills < KILLS ? `kills stopped after ${SECONDS} s (of ${KILLS} asked), ` : ""}${wallS.toFixed(0)} s wall; CPU s: the workers ${childCpu.toFixed(1)} (${((1000 * childCpu) / processes).toFixed(0)} ms a process), this one (the counter) ${ownCpu.toFixed(1)}\n`,
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
  } finally {
    await world.close();
  }
}

await main();
