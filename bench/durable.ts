/**
 * The figures of durable runs (issue 32): what intent-before-effect costs per call. A no-op
 * built-in on the embedded classic-level store (sync never: the CLI's default; sync always: the
 * server's, one fsync per commit), the
 * tree wrapped to time each `started` record's write — the one write intent adds to a call —
 * beside the whole call's latency; with sync always also 16 runs calling at once, whose commits
 * share fsyncs (the tree's group commit). Bar: the started record ≤ 0.1 ms at p50.
 * Run: npm run build && node dist/bench/durable.js [--quick]
 * One configuration: node dist/bench/durable.js --sync always --callers 16 --calls 2000 (count its
 * fsyncs with strace -f -c -e trace=fdatasync,fsync)
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { seedTools } from "../tools/catalogue/seed.js";
import { createRuntime } from "../tools/runtime.js";
import { openTree } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import { noopTool } from "./fixtures.js";
import { median, percentile, printTable } from "./report.js";

const ms = (x: number) => x.toFixed(3);

const quick = process.argv.includes("--quick");
const CALLS = quick ? 2_000 : 10_000;
const WARMUP = 500;

/** The tree, with the duration of every write of a `started` record (an append holding state "started"). */
function timingStarts(tree: Tree, into: number[]): Tree {
  return new Proxy(tree, {
    get(target, prop, receiver) {
      if (prop !== "append") return Reflect.get(target, prop, receiver);
      return async (...args: Parameters<Tree["append"]>) => {
        const value = args[1];
        const started =
          value.kind === "json" && (value.value as { state?: string } | null)?.state === "started";
        const s = performance.now();
        const out = await target.append(...args);
        if (started) into.push(performance.now() - s);
        return out;
      };
    },
  });
}

async function intentCost(sync: "never" | "always", calls: number, callers = 1): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-durable-"));
  const raw = await openTree({ backend: "classic", location: join(dir, "db"), sync });
  try {
    await seedTools({ tree: raw, builtins: [noopTool] });
    const starts: number[] = [];
    const tree = timingStarts(raw, starts);
    const runtime = createRuntime({
      tree,
      builtins: [noopTool],
      logger: pino({ level: "silent" }),
      workspace: dir,
    });
    for (let i = 0; i < WARMUP; i++) await runtime.call("bench.noop", { n: i }, { vid: "warm" });
    starts.length = 0;
    const lat: number[] = [];
    const t0 = performance.now();
    // `callers` runs calling at once (each its own run, as a server's concurrent turns)
    await Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        for (let i = 0; i < calls / callers; i++) {
          const s = performance.now();
          const r = await runtime.call("bench.noop", { n: i }, { vid: `run${c}` });
          lat.push(performance.now() - s);
          if (r.kind !== "ok") throw new Error(`unexpected result: ${r.text}`);
        }
      }),
    );
    const perCall = (performance.now() - t0) / lat.length;
    await runtime.close();
    const how = `sync ${sync}${callers > 1 ? `, ${callers} runs calling at once` : ""}`;
    return [
      [`started record write (added per call), ${how}`, ms(median(starts)), ms(percentile(starts, 99)), ""],
      [`whole call (no-op built-in), ${how}`, ms(median(lat)), ms(percentile(lat, 99)), ms(perCall)],
    ];
  } finally {
    await raw.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

async function main(): Promise<void> {
  const head = ["figure", "p50 ms", "p99 ms", "wall ms a call (all callers)"];
  // one configuration alone (to count its fsyncs from outside, e.g. strace -c -e trace=fdatasync)
  const only = arg("sync");
  if (only === "always" || only === "never") {
    const callers = Number(arg("callers") ?? 1);
    printTable(head, await intentCost(only, Number(arg("calls") ?? CALLS), callers));
    return;
  }
  console.log(`durable runs: ${CALLS} calls (sync never), ${CALLS / 5} (sync always), classic-level`);
  printTable(head, [
    ...(await intentCost("never", CALLS)),
    ...(await intentCost("always", CALLS / 5)),
    ...(await intentCost("always", CALLS / 5, 16)),
  ]);
}

await main();
