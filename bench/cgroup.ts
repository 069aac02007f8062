/**
 * Cgroup bench: what the per-command cgroups cost the server, outside bubblewrap — making them with
 * their caps, reading the OOM count and removing them — with the pids cgroup alone (as before the
 * memory cap) and with pids and memory, rounds interleaved so the machine's load weighs on both.
 *
 * Run: npm run build && node dist/bench/cgroup.js [--quick]
 */
import { performance } from "node:perf_hooks";
import { type CgroupController, openCommandCgroups } from "../tools/sandbox/cgroup.js";
import { median, percentile, printTable } from "./report.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 50 : 200;
const caps = { processes: 512, residentBytes: 4 * 1024 ** 3 };

async function main(): Promise<void> {
  const sets: Array<[string, CgroupController[]]> = [
    ["pids", ["pids"]],
    ["pids + memory", ["pids", "memory"]],
  ];
  const opened = [];
  for (const [name, wanted] of sets) {
    const cg = await openCommandCgroups(undefined, wanted);
    if (!cg || cg.controllers.size !== wanted.length) {
      console.log(`no writable ${name} cgroups here (root, or a delegated cgroup v2 folder, is needed)`);
      await cg?.close();
      for (const o of opened) await o.cg.close();
      return;
    }
    opened.push({ name, cg, times: [] as number[] });
  }
  let n = 0;
  for (let r = 0; r < ROUNDS; r++)
    for (const o of opened) {
      const t0 = performance.now();
      const made = await o.cg.make(`bench-${n++}`, caps);
      await made.outOfMemory();
      await made.remove();
      o.times.push(performance.now() - t0);
    }
  for (const o of opened) await o.cg.close();
  printTable(
    ["cgroups per command", "p50 ms", "p99 ms"],
    opened.map((o) => [o.name, median(o.times).toFixed(3), percentile(o.times, 99).toFixed(3)]),
  );
}

await main();
