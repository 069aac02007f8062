/**
 * Replay bench: replays per second of a recorded 20-call run (issue 32: bar ≥ 200/s). The run is
 * recorded by the real loop and runtime on classic-level (default durability) in a real workspace,
 * its model scripted in process (10 steps of two calls each — writes, reads, replaces, tree sets,
 * gets and lists — then an answer); then the real loop replays it from its records, one replay
 * after another, each reading the run from the tree as `byteseek run --replay` does, on a fresh
 * scratch tree. Also: the same with the run read once (the loop, provider and runtime alone).
 * A row runs for a budget of this process's CPU and reports replays per CPU-second (what a core of
 * its own gives) beside the wall-clock rate (what this process got of a shared machine).
 *
 * Run: npm run build && node dist/bench/replay.js [--quick]
 */
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { createAgent } from "../agent/loop.js";
import type { ChatResponse, Provider } from "../agent/providers/types.js";
import { replayRun } from "../agent/replay/replay.js";
import { readTranscript } from "../agent/replay/transcript.js";
import { dirs } from "../shared/keys.js";
import { withByteseek } from "./fixtures.js";
import { median, percentile, printTable } from "./report.js";

const quick = process.argv.includes("--quick");
/** Each row runs until the process has used this much CPU (wall time on a shared machine says little). */
const CPU_SECONDS = quick ? 1 : 5;
/** Replays before measuring: the JIT and the caches warm by work done, not by time passed. */
const WARM_UP = quick ? 30 : 150;
const VID = "bench-replay";

/** Ten steps of two calls (20 calls), then the answer. */
function script(): ChatResponse[] {
  const steps: ChatResponse[] = [];
  const call = (i: number, name: string, args: unknown) => ({
    id: `c${i}`,
    name,
    argsText: JSON.stringify(args),
  });
  for (let i = 0; i < 10; i++) {
    const file = `f${i}.txt`;
    const pair =
      i % 5 === 0
        ? [
            call(2 * i, "edit.write", { path: file, text: `a = ${i}\nb = ${i}\n` }),
            call(2 * i + 1, "edit.read", { path: file }),
          ]
        : i % 5 === 1
          ? [
              call(2 * i, "edit.write", { path: file, text: `x = ${i}\n` }),
              call(2 * i + 1, "edit.replace", { path: file, old: "x", new: "y" }),
            ]
          : i % 5 === 2
            ? [
                call(2 * i, "edit.read", { path: "f0.txt" }),
                call(2 * i + 1, "tree.list", { key: dirs.prompts }),
              ]
            : i % 5 === 3
              ? [
                  call(2 * i, "tree.set", { key: `/notes/n${i}`, value: `note ${i}` }),
                  call(2 * i + 1, "tree.get", { key: `/notes/n${i}` }),
                ]
              : [
                  call(2 * i, "edit.read", { path: "f1.txt" }),
                  call(2 * i + 1, "tree.list", { key: "/notes/" }),
                ];
    steps.push({
      text: `step ${i}`,
      toolCalls: pair,
      stopReason: "tool_calls",
      usage: { inputTokens: 900 + i, outputTokens: 40 },
    });
  }
  steps.push({
    text: "done",
    toolCalls: [],
    stopReason: "stop",
    usage: { inputTokens: 1200, outputTokens: 5 },
  });
  return steps;
}

function scripted(replies: ChatResponse[]): Provider {
  let next = 0;
  return {
    api: "openai",
    model: "scripted",
    async complete() {
      const r = replies[next++];
      if (!r) throw new Error("the script is empty");
      return r;
    },
    async close() {},
  };
}

interface Measured {
  perSecond: number;
  /** Replays per second of this process's CPU time (user + system): what a core of its own gives. */
  perCpuSecond: number;
  ms: number[];
}

async function measure(cpuSeconds: number, once: () => Promise<void>): Promise<Measured> {
  const ms: number[] = [];
  const start = performance.now();
  const cpu = process.cpuUsage();
  const used = () => {
    const u = process.cpuUsage(cpu);
    return (u.user + u.system) / 1e6;
  };
  while (used() < cpuSeconds) {
    const t0 = performance.now();
    await once();
    ms.push(performance.now() - t0);
  }
  return {
    perSecond: ms.length / ((performance.now() - start) / 1000),
    perCpuSecond: ms.length / used(),
    ms,
  };
}

async function main(): Promise<void> {
  await withByteseek("byteseek-bench-replay-", async ({ bs, logger }) => {
    const model = scripted(script());
    const recorder = createAgent({
      tree: bs.tree,
      runtime: bs.runtime,
      logger,
      provider: async () => model,
    });
    const recorded = await recorder.runTurn({ vid: VID, input: "make the files and notes" });
    const failed = recorded.calls.filter((c) => c.isError);
    if (recorded.reason !== "done" || recorded.calls.length !== 20 || failed.length > 0)
      throw new Error(
        `the recorded run is not the intended one: ${recorded.reason}, ${JSON.stringify(recorded.calls)}`,
      );

    const replay = (transcript?: Awaited<ReturnType<typeof readTranscript>>) => async () => {
      const r = await replayRun({
        tree: bs.tree,
        runtime: bs.runtime,
        logger,
        vid: VID,
        ...(transcript ? { transcript } : {}),
      });
      if (r.divergence || r.notes.length > 0 || r.executed !== 0)
        throw new Error(`the replay diverged: ${JSON.stringify(r)}`);
    };
    const transcript = await readTranscript(bs.tree, VID);
    for (let i = 0; i < WARM_UP; i++) {
      await replay()();
      await replay(transcript)();
    }
    const full = await measure(CPU_SECONDS, replay());
    const loopOnly = await measure(CPU_SECONDS, replay(transcript));
    await bs.close();

    console.log(
      `A 20-call run (11 steps), replayed one after another for ${CPU_SECONDS} s of CPU a row, after ${WARM_UP} of each (classic-level store; load average ${loadavg()[0]?.toFixed(1)}):\n`,
    );
    const row = (label: string, m: Measured) => [
      label,
      String(m.ms.length),
      m.perSecond.toFixed(0),
      m.perCpuSecond.toFixed(0),
      median(m.ms).toFixed(2),
      percentile(m.ms, 99).toFixed(2),
    ];
    printTable(
      ["replay", "replays", "replays/s", "replays per CPU-second", "p50 ms", "p99 ms"],
      [
        row("reading the run from the tree each time (as the CLI does)", full),
        row("the run read once (loop, recorded model and tools, scratch tree)", loopOnly),
      ],
    );
    const met = (m: Measured) => (m.perCpuSecond >= 200 ? "met" : "NOT met");
    console.log(
      `\nbar: ≥ 200 replays/s on a core of its own (per CPU-second) — as the CLI replays: ${met(full)}; the run read once: ${met(loopOnly)}`,
    );
  });
}

await main();
