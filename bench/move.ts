/**
 * Move, copy and search figures (issue 35, item 8): a move and a copy of a directory holding
 * 100,000 values (one revision each) beside the floor of writing the same keys in one import, and a
 * search over 1,000,000 values (plain text and a regular expression) with the longest the event
 * loop was held meanwhile (the search yields between pages; a probe timer measures the gaps).
 *
 * The stores are built with imports (one batch each), classic-level, sync never. Wall and CPU
 * times are the process's; the machine is shared, so note the load average beside them.
 *
 *   npm run build && node dist/bench/move.js [--quick]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { grep } from "../tree/grep.js";
import { copy, move, openTree } from "../tree/index.js";
import type { ExportEntry, Tree } from "../tree/types.js";
import { fmt, printTable } from "./report.js";

const quick = process.argv.includes("--quick");
const MOVE_KEYS = quick ? 10_000 : 100_000;
const SEARCH_VALUES = quick ? 100_000 : 1_000_000;
const DIRS = 100;

interface Timed<T> {
  value: T;
  wallMs: number;
  cpuMs: number;
}

async function timed<T>(fn: () => Promise<T>): Promise<Timed<T>> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = await fn();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { value, wallMs, cpuMs: (used.user + used.system) / 1000 };
}

function* lines(prefix: string, from: number, count: number, needleEvery = 0): Generator<ExportEntry> {
  for (let i = from; i < from + count; i++) {
    const needle = needleEvery > 0 && i % needleEvery === 0 ? " needle" : "";
    yield { key: `${prefix}${i % DIRS}/${i}`, kind: "char/utf8", value: `value ${i} of the bench${needle}` };
  }
}

async function fill(tree: Tree, prefix: string, count: number, needleEvery = 0): Promise<Timed<void>> {
  return timed(async () => {
    // imports of 100,000 lines: one batch each, a revision each
    for (let from = 0; from < count; from += 100_000)
      await tree.import(lines(prefix, from, Math.min(100_000, count - from), needleEvery));
  });
}

const row = (what: string, t: Timed<unknown>, n: number): string[] => [
  what,
  fmt(Math.round(t.wallMs)),
  fmt(Math.round(t.cpuMs)),
  fmt(Math.round((n / t.wallMs) * 1000)),
];

async function moveFigures(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-move-"));
  const tree = await openTree({ backend: "classic", location: dir });
  try {
    const built = await fill(tree, "/m/", MOVE_KEYS);
    const keys = MOVE_KEYS + DIRS + 1;
    const before = tree.revision();
    const moved = await timed(() => move(tree, "/m/", "/moved/"));
    const revs = tree.revision() - before;
    const copied = await timed(() => copy(tree, "/moved/", "/copied/"));
    const back = await timed(() => move(tree, "/copied/", "/moved/", { overwrite: true }));
    console.log(
      `\nMove and copy of a directory of ${fmt(MOVE_KEYS)} values in ${DIRS} subdirectories (${fmt(keys)} keys), classic-level:`,
    );
    printTable(
      ["operation", "wall ms", "cpu ms", "keys/s"],
      [
        row(`import the ${fmt(MOVE_KEYS)} values (the floor: one batch)`, built, MOVE_KEYS),
        row("move /m/ → /moved/", moved, keys),
        row("copy /moved/ → /copied/", copied, keys),
        row("move /copied/ → /moved/ --overwrite", back, keys),
      ],
    );
    console.log(`the move took ${revs} revision(s); it answered keys=${moved.value.keys}`);
  } finally {
    await tree.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function searchFigures(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-grep-"));
  const tree = await openTree({ backend: "classic", location: dir });
  try {
    const built = await fill(tree, "/s/", SEARCH_VALUES, 100_000);
    const budget = { maxMs: 600_000, maxBytes: Number.MAX_SAFE_INTEGER, limit: 1000 };
    const rows: string[][] = [];
    const held: string[] = [];
    for (const [what, o] of [
      ["text 'needle' (in 1 value of 100,000)", { pattern: "needle" }],
      ["text absent (reads everything)", { pattern: "no such text" }],
      ["regex /of the b[a-z]+ch needle$/", { pattern: "of the b[a-z]+ch needle$", regex: true }],
    ] as const) {
      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const t = await timed(() => grep(tree, "/s/", { ...budget, ...o }));
      delay.disable();
      rows.push([...row(what, t, SEARCH_VALUES), fmt(t.value.matches.length)]);
      held.push(
        `${what}: event loop held at most ${(delay.max / 1e6).toFixed(1)} ms (p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms)`,
      );
    }
    console.log(
      `\nSearch over ${fmt(SEARCH_VALUES)} values (~35 bytes each) in ${DIRS} directories, classic-level:`,
    );
    printTable(
      ["search", "wall ms", "cpu ms", "values/s", "matches"],
      [
        [
          `(build: ${SEARCH_VALUES / 100_000} imports of 100,000)`,
          fmt(Math.round(built.wallMs)),
          fmt(Math.round(built.cpuMs)),
          fmt(Math.round((SEARCH_VALUES / built.wallMs) * 1000)),
          "",
        ],
        ...rows,
      ],
    );
    for (const h of held) console.log(h);
  } finally {
    await tree.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}${quick ? " (--quick)" : ""}`,
);
await moveFigures();
await searchFigures();
