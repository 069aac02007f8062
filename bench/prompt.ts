/**
 * Prompt bench: building what the model gets on a turn (system text + tool schemas) from a tree
 * holding 1,000 declared tools, 10,000 call records and 1,000 memory entries (classic-level).
 * - median (and p95) ms per build, the previous turn having 5 failing calls (bar: median ≤ 5 ms);
 * - the same right after a write (the revision moved, so the revision-keyed caches miss);
 * - the first build (cold: every declaration parsed once);
 * - the schema bytes of the default tool list (what a fresh store offers), its file tools beside pi's.
 *
 * Run: npm run build && node dist/bench/prompt.js [--quick]
 */
import { performance } from "node:perf_hooks";
import { lastTurnKey } from "../prompts/build.js";
import { dirs, keys, runDirs } from "../shared/keys.js";
import { json } from "../tree/value.js";
import { withByteseek } from "./fixtures.js";
import { median, percentile, printTable } from "./report.js";
import { isFileTool, PI_FILE_TOOL_BYTES, schemaBytes } from "./schema-bytes.js";

const quick = process.argv.includes("--quick");
const BUILDS = quick ? 50 : 300;
const TOOLS = 1_000;
const RECORDS = 10_000;
const MEMORY = 1_000;

async function inBatches(n: number, write: (i: number) => Promise<unknown>, width = 256): Promise<void> {
  for (let i = 0; i < n; i += width) {
    const batch: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(n, i + width); j++) batch.push(write(j));
    await Promise.all(batch);
  }
}

async function main(): Promise<void> {
  await withByteseek("byteseek-bench-prompt-", async ({ tree, bs }) => {
    const defaults = (await bs.prompt("fresh", "")).tools;

    const filled = performance.now();
    await inBatches(TOOLS, (i) =>
      tree.set(
        keys.tool(`bench.t${i}`),
        json({
          name: `bench.t${i}`,
          description: `Benchmark tool number ${i}: reads a file of the workspace and shows it`,
          snippet: `bench.t${i}(path) — benchmark tool ${i}`,
          guidelines: [`Guideline shared by every tenth tool (${i % 10}).`, `Only for bench.t${i}.`],
          params: {
            type: "object",
            properties: { path: { type: "string", description: "a file" }, n: { type: "integer" } },
            required: ["path"],
          },
          impl: { kind: "builtin", ref: "edit.read" },
        }),
      ),
    );
    // 10,000 records over 100 runs; the measured run's previous turn made the last 5, all failing.
    await inBatches(RECORDS, (i) =>
      tree.append(
        runDirs.records(`run${i % 100}`),
        json({
          name: "edit.replace",
          args: { path: `f${i}.txt`, old: "a", new: "b" },
          kind: i % 3 === 0 ? "runtime" : "ok",
          isError: i % 3 === 0,
          text: `record ${i}: old text occurs 2 times, at lines 4, 9 — include more surrounding lines`,
          ts: Date.now(),
          ms: 1,
        }),
        { vid: `run${i % 100}` },
      ),
    );
    const failing = Array.from({ length: 5 }, (_, k) => keys.toolRecord("run0", k * 3));
    await tree.set(lastTurnKey("run0"), json({ records: failing, reason: "done" }));
    await inBatches(MEMORY, (i) =>
      tree.set(`${dirs.memory}topic${i}`, json(`note ${i}: ${i % 50 === 0 ? "deploy with care" : "misc"}`)),
    );
    const fillMs = performance.now() - filled;

    const input = "how do I deploy?";
    const t0 = performance.now();
    const first = await bs.prompt("run0", input);
    const coldMs = performance.now() - t0;
    if (first.tools.length < TOOLS) throw new Error(`only ${first.tools.length} tools offered`);
    if (!first.system.includes("[previous tool results]")) throw new Error("no previous results section");

    const lat: number[] = [];
    for (let i = 0; i < BUILDS; i++) {
      const s = performance.now();
      await bs.prompt("run0", input);
      lat.push(performance.now() - s);
    }
    // A turn writes between its builds (records, messages): the revision moves, the caches miss.
    const latMoved: number[] = [];
    for (let i = 0; i < Math.min(BUILDS, 100); i++) {
      await tree.append(runDirs.records("run1"), json({ name: "edit.read", kind: "ok", text: "x" }), {
        vid: "run1",
      });
      const s = performance.now();
      await bs.prompt("run0", input);
      latMoved.push(performance.now() - s);
    }
    await bs.close();

    console.log(
      `# prompt bench (${quick ? "quick" : "full"}): ${TOOLS} tools, ${RECORDS} records, ${MEMORY} memory entries, classic-level, ${BUILDS} builds`,
    );
    const m = median(lat);
    printTable(
      ["figure", "value", "bar"],
      [
        ["median ms per build", m.toFixed(2), `≤ 5 ms: ${m <= 5 ? "met" : "MISSED"}`],
        ["p95 ms per build", percentile(lat, 95).toFixed(2), ""],
        ["median ms per build right after a write (caches miss)", median(latMoved).toFixed(2), ""],
        ["first build (cold), ms", coldMs.toFixed(1), ""],
        ["system prompt, characters", String(first.system.length), ""],
        ["tool schemas offered", String(first.tools.length), ""],
        ["default tool list, schema bytes", String(schemaBytes(defaults)), `${defaults.length} tools`],
        [
          "default file tools, schema bytes",
          String(schemaBytes(defaults.filter(isFileTool))),
          `pi's read, write, edit: ${PI_FILE_TOOL_BYTES.toLocaleString("en")}`,
        ],
        ["filling the tree, s", (fillMs / 1000).toFixed(1), ""],
      ],
    );
  });
}

await main();
