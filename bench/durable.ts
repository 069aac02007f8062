/**
 * The figures of durable runs (issue 32): what intent-before-effect costs per call. On the
 * embedded classic-level store (sync never: the CLI's default; sync always: the server's, one
 * fsync per commit), per call class: a read (tree.get), a tree write (tree.set), an http call (to a
 * loopback server), an edit (edit.write), a command (shell.run, sandboxed) and the no-op built-in
 * (of unknown effect, as mcp or llm). The figure is the intent on the call's path (the runtime's
 * `onIntentWait`): the whole started record's write for a call that runs after it; for an edit or
 * a command, which run while it is written (tools/call/run-call.ts), only what their effect still
 * waited for it. Beside it, the started record's write itself (the tree wrapped to time it), the
 * whole call, and the synced commits a call makes (counted on the real store's batches). At sync
 * always a read's, a tree write's and an http call's intent is committed without an fsync of its
 * own (tools/call/intent.ts intentNeedsSync). Also 16 runs calling the no-op at once (their
 * commits share fsyncs: the tree's group commit), and this disk's fdatasync: the floor of a
 * record that must be on disk before an effect nothing can overlap. Bar: ≤ 0.1 ms at p50.
 * Run: npm run build && node dist/bench/durable.js [--quick]
 * One configuration: node dist/bench/durable.js --sync always [--classes] --callers 16 --calls 2000
 * (count its fsyncs with strace -f -c -e trace=fdatasync)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClassicLevel } from "classic-level";
import { pino } from "pino";
import { seedTools } from "../tools/catalogue/seed.js";
import { createEditTools } from "../tools/edit/index.js";
import { createRuntime } from "../tools/runtime.js";
import { createShellTools } from "../tools/shell/index.js";
import { createTreeTools } from "../tools/tree/tools.js";
import { openTree } from "../tree/index.js";
import { createLevelTree } from "../tree/level-tree.js";
import type { Tree, TxnOp, TxnRequest } from "../tree/types.js";
import { str } from "../tree/value.js";
import { declareCounter } from "./chaos-store.js";
import { aroundStarts, isStartedRecord, noopTool } from "./fixtures.js";
import { median, percentile, printTable } from "./report.js";

const ms = (x: number) => x.toFixed(3);

const quick = process.argv.includes("--quick");
const CALLS = quick ? 2_000 : 10_000;
const WARMUP = 500;
const CLASS_CALLS = quick ? 200 : 600;
const classHead = [
  "call class",
  "intent on the call's path p50 ms",
  "p99 ms",
  "started record write p50 ms",
  "whole call p50 ms",
  "synced commits a call",
];

/** The tree, with the duration of every write of a `started` record. */
function timingStarts(tree: Tree, into: number[]): Tree {
  return aroundStarts(tree, async (append) => {
    const s = performance.now();
    const out = await append();
    into.push(performance.now() - s);
    return out;
  });
}

/** What the writes carrying a started record (a tree write's: tools/call/intent-write.ts) took, and the last record carried. */
interface Carried {
  times: number[];
  op?: TxnOp;
}

/** The tree, timing every transaction that carries a call's started record at its head. */
function timingCarried(tree: Tree, into: Carried): Tree {
  return new Proxy(tree, {
    get(target, prop, receiver) {
      if (prop !== "txn") return Reflect.get(target, prop, receiver);
      return async (req: TxnRequest) => {
        const op = req.success?.[0];
        if (op?.op !== "append" || !isStartedRecord(op.value)) return target.txn(req);
        into.op = op;
        const s = performance.now();
        const out = await target.txn(req);
        into.times.push(performance.now() - s);
        return out;
      };
    },
  });
}

/**
 * What a started record adds to the commit of the tree write that carries it: the same write made
 * alone and with the record at its head, alternating, p50 of each (the record as the runtime
 * carried it last).
 */
async function carriedRecordCost(
  tree: Tree,
  record: TxnOp,
  n: number,
): Promise<{ alone: number; carried: number }> {
  const alone: number[] = [];
  const carried: number[] = [];
  for (let i = 0; i < n; i++) {
    const key = `/bench/carried/k${i % 50}`;
    let s = performance.now();
    await tree.set(key, str(`a${i}`));
    alone.push(performance.now() - s);
    s = performance.now();
    await tree.txn({ success: [record, { op: "set", key, value: str(`c${i}`) }] });
    carried.push(performance.now() - s);
  }
  return { alone: median(alone), carried: median(carried) };
}

async function intentCost(sync: "never" | "always", calls: number, callers = 1): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-durable-"));
  const raw = await openTree({ backend: "classic", location: join(dir, "db"), sync });
  try {
    await seedTools({ tree: raw, builtins: [noopTool] });
    const starts: number[] = [];
    const waits: number[] = [];
    const tree = timingStarts(raw, starts);
    const runtime = createRuntime({
      tree,
      builtins: [noopTool],
      logger: pino({ level: "silent" }),
      workspace: dir,
      onIntentWait: (wait) => waits.push(wait),
    });
    for (let i = 0; i < WARMUP; i++) await runtime.call("bench.noop", { n: i }, { vid: "warm" });
    starts.length = 0;
    waits.length = 0;
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
      [`intent on the call's path, ${how}`, ms(median(waits)), ms(percentile(waits, 99)), ""],
      [`started record write, ${how}`, ms(median(starts)), ms(percentile(starts, 99)), ""],
      [`whole call (no-op built-in), ${how}`, ms(median(lat)), ms(percentile(lat, 99)), ms(perCall)],
    ];
  } finally {
    await raw.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The classic-level store at `location`, counting the batches written with an fsync. */
async function countingStore(
  location: string,
  sync: "never" | "always",
  synced: { n: number },
): Promise<Tree> {
  const db = new ClassicLevel<string, string>(location, { keyEncoding: "utf8", valueEncoding: "utf8" });
  await db.open();
  type Chained = ReturnType<typeof db.batch>;
  const batch = db.batch.bind(db) as () => Chained;
  const chained = (): Chained => {
    const b = batch();
    const write = b.write.bind(b);
    b.write = (options?: { sync?: boolean }) => {
      if (options?.sync === true) synced.n++;
      return write(options ?? {});
    };
    return b;
  };
  // the tree only ever asks for a chained batch (level-tree.ts `write`)
  return createLevelTree(Object.assign(db, { batch: chained }), { sync });
}

/** A class of call: its tool, its arguments for the i-th call, and how many calls it gets. */
interface CallClass {
  label: string;
  name: string;
  args: (i: number) => Record<string, unknown>;
  calls: number;
}

function callClasses(calls: number): CallClass[] {
  return [
    { label: "read (tree.get)", name: "tree.get", args: () => ({ key: "/bench/k0" }), calls },
    {
      label: "tree write (tree.set)",
      name: "tree.set",
      args: (i) => ({ key: `/bench/k${i % 50}`, value: `v${i}` }),
      calls,
    },
    { label: "http (loopback, Idempotency-Key)", name: "count.add", args: () => ({}), calls },
    {
      label: "edit (edit.write)",
      name: "edit.write",
      args: (i) => ({ path: `f${i % 10}.txt`, text: `v${i}\n` }),
      calls,
    },
    // a sandboxed process each: few, or they are the whole minute
    {
      label: "command (shell.run, bwrap)",
      name: "shell.run",
      args: () => ({ command: "true" }),
      calls: Math.max(10, calls / 20),
    },
    { label: "unknown effect (no-op built-in)", name: "bench.noop", args: (i) => ({ n: i }), calls },
  ];
}

/**
 * The http calls' counter server, in a process of its own: in this one, its sockets' events would
 * compete with the next call's record for the event loop (a real endpoint is elsewhere).
 */
async function startCounter(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `require("node:http").createServer((q, s) => { q.resume(); q.on("end", () => s.end('{"count":1}')); })` +
        `.listen(0, "127.0.0.1", function () { console.log(this.address().port); });`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const [line] = (await once(child.stdout!, "data")) as [Buffer];
  return { port: Number(line.toString().trim()), child };
}

/** Per call class, one run calling alone: the started record's write, the whole call, synced commits a call. */
async function classCosts(sync: "never" | "always", calls: number): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-durable-"));
  const counter = await startCounter();
  const synced = { n: 0 };
  const raw = await countingStore(join(dir, "db"), sync, synced);
  try {
    const builtins = [noopTool, ...createTreeTools(), ...createEditTools(), ...createShellTools()];
    await seedTools({ tree: raw, builtins });
    await declareCounter(raw, counter.port);
    await mkdir(join(dir, "ws"));
    const starts: number[] = [];
    const waits: number[] = [];
    const carried: Carried = { times: [] };
    const tree = timingCarried(timingStarts(raw, starts), carried);
    const runtime = createRuntime({
      tree,
      builtins,
      logger: pino({ level: "silent" }),
      workspace: join(dir, "ws"),
      onIntentWait: (wait) => waits.push(wait),
    });
    const rows: string[][] = [];
    const only = arg("only");
    for (const c of callClasses(calls).filter((k) => only === undefined || k.name === only)) {
      const call = async (i: number, vid: string) => {
        const r = await runtime.call(c.name, c.args(i), { vid });
        if (r.kind !== "ok") throw new Error(`${c.name}: unexpected result: ${r.text}`);
      };
      for (let i = 0; i < Math.min(1000, c.calls); i++) await call(i, `warm-${c.name}`);
      starts.length = 0;
      waits.length = 0;
      carried.times.length = 0;
      const before = synced.n;
      const lat: number[] = [];
      for (let i = 0; i < c.calls; i++) {
        const s = performance.now();
        await call(i, `run-${c.name}`);
        lat.push(performance.now() - s);
      }
      const commits = ((synced.n - before) / c.calls).toFixed(2);
      rows.push([
        `${c.label}, sync ${sync}`,
        ms(median(waits)),
        ms(percentile(waits, 99)),
        starts.length > 0 ? ms(median(starts)) : `in its write's: ${ms(median(carried.times))}`,
        ms(median(lat)),
        commits,
      ]);
      if (carried.op) {
        const { alone, carried: withRecord } = await carriedRecordCost(raw, carried.op, c.calls);
        rows.push([
          `  its started record in its write's commit, sync ${sync}`,
          ms(withRecord - alone),
          "",
          `${ms(withRecord)} with, ${ms(alone)} without`,
          "",
          "",
        ]);
        carried.op = undefined;
      }
    }
    await runtime.close();
    return rows;
  } finally {
    await raw.close();
    counter.child.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * This disk's floor for any record that must be on disk before an effect it cannot overlap: one
 * small append and its fdatasync, as LevelDB's log does, p50 over `n`.
 */
async function fdatasyncFloor(n = 2000): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-fsync-"));
  try {
    const fd = openSync(join(dir, "log"), "a");
    const line = Buffer.alloc(300, 97);
    const t: number[] = [];
    for (let i = 0; i < n; i++) {
      writeSync(fd, line);
      const s = performance.now();
      fdatasyncSync(fd);
      t.push(performance.now() - s);
    }
    closeSync(fd);
    return [
      "this disk's fdatasync of a 300-byte append (the floor)",
      ms(median(t)),
      ms(percentile(t, 99)),
      "",
    ];
  } finally {
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
    if (process.argv.includes("--classes")) {
      printTable(classHead, await classCosts(only, Number(arg("calls") ?? CLASS_CALLS)));
      return;
    }
    const callers = Number(arg("callers") ?? 1);
    printTable(head, await intentCost(only, Number(arg("calls") ?? CALLS), callers));
    return;
  }
  console.log(`durable runs: ${CLASS_CALLS} calls a class (shell ${CLASS_CALLS / 20}), classic-level`);
  printTable(classHead, [
    ...(await classCosts("never", CLASS_CALLS)),
    ...(await classCosts("always", CLASS_CALLS)),
  ]);
  console.log(`no-op built-in, ${CALLS / 5} calls, 16 runs calling at once`);
  printTable(head, [...(await intentCost("always", CALLS / 5, 16)), await fdatasyncFloor()]);
}

await main();
