/**
 * Resume latency (issue 32; bar: p50 ≤ 50 ms): from resumeRun to the run's next model step — the
 * lease taken, the session and the call records read, each interrupted call settled (an http call
 * resent, an edit or tree write checked or run again, a mark reported unknown). Interrupted runs
 * are made as they happen: a worker (bench/chaos-worker.ts) driving them all at once is SIGKILLed
 * at an intent. Then fresh processes resume one run each (a fresh process's first resume: node's
 * lazy compilation and the store's first reads included), and one process resumes the rest one
 * after another, as a server does (warm). Wall and CPU of each resume: this machine is shared, so
 * the CPU time a resume takes is the figure to trust; wall includes waiting for a core.
 *
 * Run: npm run build && node dist/bench/resume.js [--runs 120] [--fresh 10] [--prof DIR]
 * (--prof: the warm process writes a V8 CPU profile into DIR)
 */
import { once } from "node:events";
import type { Said } from "./chaos-plan.js";
import { openChaosWorld } from "./chaos-store.js";
import { median, percentile, printTable } from "./report.js";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] as string) : fallback;
};

const RUNS = Number(arg("runs", "120"));
const FRESH = Number(arg("fresh", "10"));
const PROF = arg("prof", "");

const row = (label: string, xs: number[]) => [
  `${label} (${xs.length})`,
  // a small run may have no resume of a kind
  xs.length === 0 ? "–" : median(xs).toFixed(1),
  xs.length === 0 ? "–" : percentile(xs, 99).toFixed(1),
];

async function main(): Promise<void> {
  const world = await openChaosWorld("byteseek-bench-resume-");
  try {
    const vids = Array.from({ length: RUNS }, (_, i) => `r${String(i).padStart(4, "0")}`);
    // every run under way at once, killed at an intent: each run left between two of its calls, or in one
    const killed = world.worker(vids, { env: { BYTESEEK_KILL_AT: `effect:${3 * RUNS}` } });
    const [, signal] = (await once(killed, "close")) as [number | null, string | null];
    if (signal !== "SIGKILL") throw new Error("the worker making interrupted runs was not killed");
    const interrupted = vids.filter((v) => !world.said().some((s) => s.vid === v && s.end));
    const fresh = interrupted.slice(0, FRESH);
    for (const vid of fresh) {
      const [code] = (await once(world.worker([vid]), "close")) as [number | null];
      if (code !== 0) throw new Error(`a resuming process failed (exit ${code})`);
    }
    const rest = interrupted.slice(FRESH);
    const warm = world.worker(rest, {
      mode: "sequential",
      node: PROF ? ["--cpu-prof", "--cpu-prof-dir", PROF] : [],
    });
    const [code] = (await once(warm, "close")) as [number | null];
    if (code !== 0) throw new Error(`the resuming process failed (exit ${code})`);

    const resumes = world.said().filter((s): s is Said & { resumeMs: number } => s.resumeMs !== undefined);
    const firsts = resumes.filter((s) => s.first);
    const warms = resumes.filter((s) => !s.first && rest.includes(s.vid));
    const ended = new Set(world.said().flatMap((s) => (s.end === "done" ? [s.vid] : [])));
    console.log(
      `${RUNS} runs killed at once in flight, ${interrupted.length} interrupted; ${ended.size} done after the resumes\n`,
    );
    // resending an http call makes the process's first request: undici's first use is in it
    const http = (s: Said) => (s.calls ?? []).includes("count.add");
    const wall = (xs: Said[]) => xs.map((s) => s.resumeMs ?? 0);
    const cpu = (xs: Said[]) => xs.map((s) => s.cpuMs ?? 0);
    printTable(
      ["resume (resumeRun → next model step)", "p50 ms", "p99 ms"],
      [
        row("a fresh process's first resume, wall", wall(firsts)),
        row("the same, CPU", cpu(firsts)),
        row("the same, CPU, resending an http call", cpu(firsts.filter(http))),
        row("the same, CPU, settling other calls", cpu(firsts.filter((s) => !http(s)))),
        row("a warm process resuming runs one after another, wall", wall(warms)),
        row("the same, CPU", cpu(warms)),
      ],
    );
  } finally {
    await world.close();
  }
}

await main();
