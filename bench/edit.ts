/**
 * The figures of the edit tools (issue 5), each beside its floor measured with plain fs calls in the same run:
 * - edit.replace near the end of a 50 MB file vs reading it and atomically rewriting it (bar: ≤ 1.5×);
 * - edit.read of the last 100 lines of a 1 GB file: peak RSS growth (bar: < 64 MB) and time vs reading the
 *   tail with plain fs calls (bar: ≤ 2×);
 * - edit.grep over ≥ 20,000 files (copies of node_modules) vs ripgrep (bar: ≤ 3× wall time, same matches).
 * Run: npm run build && node dist/bench/edit.js [--only=replace,read,grep] [--reps=N] [--tree=DIR]
 * `--tree` keeps the grep tree in DIR (made on first use) so later runs skip copying node_modules.
 */
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pino from "pino";
import { createKeyedLock } from "../tools/call/locks.js";
import { createGrepTool, createReadTool, createReplaceTool } from "../tools/edit/index.js";
import { walkFiles } from "../tools/edit/walker.js";
import { createCommandScope, createScratchRoot } from "../tools/process/scope.js";
import type { ToolContext } from "../tools/types.js";
import type { Tree } from "../tree/types.js";

const { values: flags } = parseArgs({
  options: { only: { type: "string" }, reps: { type: "string" }, tree: { type: "string" } },
});
const only = new Set((flags.only ?? "replace,read,grep").split(","));
const reps = (fallback: number) => (flags.reps ? Number(flags.reps) : fallback);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

function contextFor(root: string): ToolContext {
  return {
    vid: "bench",
    signal: new AbortController().signal,
    workspace: root,
    // the edit tools never touch the tree
    tree: undefined as unknown as Tree,
    logger: pino({ level: "silent" }),
    locks: createKeyedLock(),
    defaultTimeoutMs: 120_000,
    maxTimeoutMs: 3_600_000,
    // the edit tools start no processes
    commands: createCommandScope({
      source: {},
      passEnv: [],
      outputCapBytes: 16 * 1024 * 1024,
      root: createScratchRoot(root),
      sandbox: { mode: "off" },
    }),
  };
}

function verdict(ok: boolean): string {
  return ok ? "MET" : "NOT MET";
}

async function benchReplace(dir: string): Promise<boolean> {
  const file = path.join(dir, "fifty.txt");
  const line = `${"the quick brown fox jumps over the lazy dog ".repeat(2)}\n`;
  const lines = Math.ceil((50 * 1024 * 1024) / line.length);
  const body = line.repeat(lines - 10);
  await writeFile(file, `${body}marker-AAAA near the end\n${line.repeat(9)}`);
  const ctx = contextFor(dir);
  const replace = createReplaceTool();
  // the same durability as the tool: temp file fsynced, renamed, then the directory fsynced
  async function floor() {
    const buf = await readFile(file);
    const tmp = `${file}.floor-tmp`;
    const fh = await open(tmp, "w");
    await fh.write(buf);
    await fh.sync();
    await fh.close();
    await rename(tmp, file);
    const dh = await open(dir, "r");
    await dh.sync();
    await dh.close();
  }
  const tool: number[] = [];
  const base: number[] = [];
  let flip = false;
  const n = reps(7);
  for (let i = 0; i < n; i++) {
    base.push(await timed(floor));
    const [from, to] = flip ? ["marker-BBBB", "marker-AAAA"] : ["marker-AAAA", "marker-BBBB"];
    flip = !flip;
    tool.push(await timed(() => replace.execute({ path: "fifty.txt", old: from, new: to }, ctx)));
  }
  const t = median(tool);
  const f = median(base);
  const ok = t <= 1.5 * f;
  console.log(
    `edit.replace near the end of a 50 MB file: ${t.toFixed(1)} ms (median of ${n}); floor read + atomic rewrite + dir fsync ${f.toFixed(1)} ms; ratio ${(t / f).toFixed(2)} (bar ≤ 1.5×) ${verdict(ok)}`,
  );
  await rm(file);
  return ok;
}

async function benchRead(dir: string): Promise<boolean> {
  const file = path.join(dir, "one-gb.txt");
  const line = `${"x".repeat(99)}\n`;
  const block = Buffer.from(line.repeat((8 * 1024 * 1024) / 100));
  const fh = await open(file, "w");
  for (let written = 0; written < 1024 * 1024 * 1024; written += block.length) await fh.write(block);
  await fh.close();
  const ctx = contextFor(dir);
  const read = createReadTool();
  async function floor() {
    const h = await open(file, "r");
    const { size } = await h.stat();
    const len = 64 * 1024;
    const buf = Buffer.alloc(len);
    await h.read(buf, 0, len, size - len);
    await h.close();
    return buf.toString("utf8").split("\n").slice(-101);
  }
  // warm both paths, then measure the RSS peak across tool calls
  await floor();
  await read.execute({ path: "one-gb.txt", offset: -100 }, ctx);
  const rssBefore = process.resourceUsage().maxRSS;
  const out = await read.execute({ path: "one-gb.txt", offset: -100 }, ctx);
  const rssGrowthMb = (process.resourceUsage().maxRSS - rssBefore) / 1024;
  const lines = out.text.split("\n").length - 1;
  const tool: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < 200; i++) {
    base.push(await timed(floor));
    tool.push(await timed(() => read.execute({ path: "one-gb.txt", offset: -100 }, ctx)));
  }
  const t = median(tool);
  const f = median(base);
  const ok = rssGrowthMb < 64 && t <= 2 * f && lines === 100;
  console.log(
    `edit.read of the last 100 lines of a 1 GB file: ${lines} lines, peak RSS growth ${rssGrowthMb.toFixed(1)} MB (bar < 64 MB); ${t.toFixed(3)} ms (median of 200); floor tail read ${f.toFixed(3)} ms; ratio ${(t / f).toFixed(2)} (bar ≤ 2×) ${verdict(ok)}`,
  );
  await rm(file);
  return ok;
}

function keysOf(lines: Iterable<string>): Set<string> {
  const keys = new Set<string>();
  for (const l of lines) {
    const m = /^(.*?):(\d+):/.exec(l);
    if (m) keys.add(`${m[1]}:${m[2]}`);
  }
  return keys;
}

async function grepTree(root: string): Promise<number> {
  await mkdir(root, { recursive: true });
  let files = (await walkFiles(root, { root })).files.length;
  for (let copy = 1; files < 20_000; copy++) {
    await cp(path.resolve("node_modules"), path.join(root, `nm${copy}`), {
      recursive: true,
      verbatimSymlinks: true,
    });
    files = (await walkFiles(root, { root })).files.length;
  }
  return files;
}

async function benchGrep(root: string, files: number, pattern: string): Promise<boolean> {
  const ctx = contextFor(root);
  const grep = createGrepTool();
  const runRg = () =>
    spawnSync(
      "rg",
      ["-n", "--no-heading", "--hidden", "--no-require-git", "--no-ignore-dot", "-g", "!.git", pattern, "."],
      {
        cwd: root,
        maxBuffer: 1024 * 1024 * 1024,
        encoding: "utf8",
      },
    );
  const runTool = () => grep.execute({ pattern, limit: 100_000 }, ctx);
  const rgOut = runRg();
  const toolOut = await runTool();
  const rgKeys = keysOf(rgOut.stdout.split("\n").map((l) => l.replace(/^\.\//, "")));
  const toolKeys = keysOf(toolOut.text.split("\n"));
  const missing = [...rgKeys].filter((k) => !toolKeys.has(k));
  const extra = [...toolKeys].filter((k) => !rgKeys.has(k));
  const rgT: number[] = [];
  const toolT: number[] = [];
  const n = reps(5);
  for (let i = 0; i < n; i++) {
    rgT.push(await timed(async () => runRg()));
    toolT.push(await timed(runTool));
  }
  const t = median(toolT);
  const r = median(rgT);
  const same = missing.length === 0 && extra.length === 0;
  const ok = t <= 3 * r && same;
  console.log(
    `edit.grep /${pattern}/ over ${files} files: ${t.toFixed(0)} ms (median of ${n}); rg ${r.toFixed(0)} ms; ratio ${(t / r).toFixed(2)} (bar ≤ 3×); matches ${toolKeys.size} vs rg ${rgKeys.size}, missing ${missing.length}, extra ${extra.length} ${verdict(ok)}`,
  );
  if (!same)
    console.log(`  first differences: ${[...missing.slice(0, 3), ...extra.slice(0, 3)].join(" | ")}`);
  return ok;
}

export async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "byteseek-bench-edit-"));
  try {
    const results: boolean[] = [];
    if (only.has("replace")) results.push(await benchReplace(dir));
    if (only.has("read")) results.push(await benchRead(dir));
    if (only.has("grep")) {
      const root = flags.tree ? path.resolve(flags.tree) : path.join(dir, "tree");
      const files = await grepTree(root);
      results.push(await benchGrep(root, files, "module\\.exports\\s*=\\s*require\\("));
      results.push(await benchGrep(root, files, "TODO"));
    }
    console.log(results.every(Boolean) ? "all bars met" : "some bars NOT met");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
