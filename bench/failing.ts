/**
 * The overview's failing tools (`GET /v1/overview`'s `failing`): the scan of the call records
 * (tools/records/recent-failures.ts, what every request did before) beside the records index that
 * follows the watch (tools/records/failure-window.ts through recent-calls.ts), on classic-level
 * with RUNS runs of five records each (one in five failing), all within the hour. Prints the median
 * ms of one answer, warm, for each, and the index's first answer (its load).
 * Run: npm run build && node dist/bench/failing.js [--quick]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runDirs } from "../shared/keys.js";
import { createRecentCalls } from "../tools/records/recent-calls.js";
import { recentFailures } from "../tools/records/recent-failures.js";
import { json, openTree } from "../tree/index.js";
import { median, printTable } from "./report.js";

const quick = process.argv.includes("--quick");
const RUNS = quick ? 200 : 1_000;
const REPS = quick ? 5 : 15;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-failing-"));
  const tree = await openTree({ backend: "classic", location: join(dir, "db") });
  const index = createRecentCalls({ tree });
  try {
    const now = Date.now();
    for (let r = 0; r < RUNS; r++)
      for (let n = 0; n < 5; n++) {
        const failed = (r * 5 + n) % 5 === 0;
        await tree.append(
          runDirs.records(`run${r}`),
          json({
            name: `tool.t${(r + n) % 40}`,
            args: {},
            kind: failed ? "runtime" : "ok",
            isError: failed,
            text: failed ? "exit code 2: make: *** No rule to make target" : "ok",
            details: {},
            ts: now - 50 * 60_000 + r * 1000 + n,
            ms: 3,
            state: "done",
          }),
        );
      }
    const since = now - 60 * 60_000;
    const first = await timed(() => index.failures({ since }));
    const scan: number[] = [];
    const live: number[] = [];
    for (let i = 0; i < REPS; i++) {
      scan.push(await timed(() => recentFailures(tree, { since })));
      live.push(await timed(() => index.failures({ since })));
    }
    const [a, b] = [await recentFailures(tree, { since }), await index.failures({ since })];
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error("the index and the scan answer differently");
    printTable(
      ["figure", `${RUNS * 5} records in ${RUNS} runs`],
      [
        ["scan of the records, per answer (median ms)", median(scan).toFixed(2)],
        ["records index, per answer (median ms)", median(live).toFixed(3)],
        ["records index, first answer (its load, ms)", first.toFixed(1)],
      ],
    );
  } finally {
    index.close();
    await tree.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
