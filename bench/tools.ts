/**
 * The figures of the tool runtime (issue 4): the call boundary's own cost — resolve + validate +
 * gate + record + usage — with a no-op builtin on the embedded classic-level store.
 * - median (and p99) ms per call, one caller at a time (bar: median ≤ 0.5 ms);
 * - records per second with 1 and with 32 concurrent callers (each caller its own run);
 * - CPU µs per call, one caller, beside the store floor's: on a loaded machine the wall figures
 *   move with the neighbours, the process's own CPU time much less.
 * Run: npm run build && node dist/bench/tools.js [--quick]
 */
import { pino } from "pino";
import { keys, runDirs } from "../shared/keys.js";
import { seedTools } from "../tools/catalogue/seed.js";
import { createRuntime } from "../tools/runtime.js";
import { json, openTree } from "../tree/index.js";
import { noopTool } from "./fixtures.js";
import { fmt, median, percentile, printTable } from "./report.js";

const quick = process.argv.includes("--quick");
const CALLS = quick ? 2_000 : 20_000;
const WARMUP = 500;

async function main(): Promise<void> {
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-tools-"));
  const tree = await openTree({ backend: "classic", location: join(dir, "db") });
  try {
    await seedTools({ tree, builtins: [noopTool] });
    const logger = pino({ level: "silent" });
    const runtime = createRuntime({ tree, builtins: [noopTool], logger, workspace: dir });

    for (let i = 0; i < WARMUP; i++) await runtime.call("bench.noop", { n: i }, { vid: "warm" });

    const lat: number[] = [];
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      const s = performance.now();
      const r = await runtime.call("bench.noop", { n: i }, { vid: "one" });
      lat.push(performance.now() - s);
      if (r.kind !== "ok") throw new Error(`unexpected result: ${r.text}`);
    }
    const serialSecs = (performance.now() - t0) / 1000;
    const cpuPerCall = cpuMicros(cpu0) / CALLS;

    const callers = 32;
    const per = Math.ceil(CALLS / callers);
    const t1 = performance.now();
    await Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        for (let i = 0; i < per; i++) await runtime.call("bench.noop", { n: i }, { vid: `c${c}` });
      }),
    );
    const concurrentSecs = (performance.now() - t1) / 1000;

    // The same 32 callers sharing one run: records of one directory, usage of one node.
    const t2 = performance.now();
    await Promise.all(
      Array.from({ length: callers }, async () => {
        for (let i = 0; i < per; i++) await runtime.call("bench.noop", { n: i }, { vid: "shared" });
      }),
    );
    const sharedSecs = (performance.now() - t2) / 1000;
    const shared = await tree.list(runDirs.records("shared"), { limit: 1, after: String(per * callers - 2) });
    if (shared.children[0]?.name !== String(per * callers - 1))
      throw new Error("records of the shared run are not dense");

    // The same through a runtime asking usageWrites: await (the counters are in the record's write either way).
    const awaiting = createRuntime({
      tree,
      builtins: [noopTool],
      logger,
      workspace: dir,
      usageWrites: "await",
    });
    const latAwait: number[] = [];
    for (let i = 0; i < CALLS / 4; i++) {
      const s = performance.now();
      await awaiting.call("bench.noop", { n: i }, { vid: "await" });
      latAwait.push(performance.now() - s);
    }
    await runtime.flush();

    // The floor: the store operations one call makes (two gets and the record's append; the call adds the usage counter to that write), made
    // directly, so that the boundary's own share shows whatever the machine's load.
    const latFloor: number[] = [];
    const cpuFloor0 = process.cpuUsage();
    for (let i = 0; i < CALLS / 4; i++) {
      const s = performance.now();
      await tree.get(keys.tool("bench.noopTool"));
      await tree.get(keys.policy);
      await tree.append(runDirs.records("floor"), json({ name: "bench.noop", args: { n: i }, text: "ok" }), {
        vid: "floor",
        ro: true,
      });
      latFloor.push(performance.now() - s);
    }
    const cpuFloorPerCall = cpuMicros(cpuFloor0) / (CALLS / 4);

    console.log(
      `# tools bench (${quick ? "quick" : "full"}): no-op builtin, classic-level, ${CALLS} calls per figure`,
    );
    const m = median(lat);
    printTable(
      ["figure", "value", "bar"],
      [
        ["median ms per call (1 caller)", m.toFixed(3), `≤ 0.5 ms: ${m <= 0.5 ? "met" : "MISSED"}`],
        ["p99 ms per call (1 caller)", percentile(lat, 99).toFixed(3), ""],
        ["median ms per call, usageWrites: await", median(latAwait).toFixed(3), ""],
        ["median ms of the store floor (2 gets + append)", median(latFloor).toFixed(3), ""],
        ["CPU µs per call (1 caller)", cpuPerCall.toFixed(0), ""],
        ["CPU µs of the store floor", cpuFloorPerCall.toFixed(0), ""],
        ["records/s, 1 caller", fmt(CALLS / serialSecs), ""],
        ["records/s, 32 callers (32 runs)", fmt((per * callers) / concurrentSecs), ""],
        ["records/s, 32 callers (one run)", fmt((per * callers) / sharedSecs), ""],
      ],
    );
  } finally {
    await tree.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** User + system CPU time of this process since `start`, µs. */
function cpuMicros(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return d.user + d.system;
}

await main();
