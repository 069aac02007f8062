/**
 * The world of the durability benches (bench/chaos.ts, bench/resume.ts): a temp folder with the
 * store (seeded, the http counter declared and granted), the workspace, the marks file and the
 * stats file; the local counter that notes every request's idempotency key; and how to start the
 * worker that drives runs (bench/chaos-worker.ts) — and what the effects say at the end.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChatMessage } from "../agent/providers/types.js";
import { sessionDir } from "../agent/run-keys.js";
import { seedStore } from "../compose/byteseek.js";
import { keys } from "../shared/keys.js";
import { POLICY_KEY } from "../tools/gate/policy.js";
import { readRecord, recordsDir } from "../tools/records/records.js";
import { openTree } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import { type Json, json } from "../tree/value.js";
import { benchBuiltins, type Paths, type Said } from "./chaos-plan.js";

const WORKER = join(dirname(fileURLToPath(import.meta.url)), "chaos-worker.js");

export interface ChaosWorld {
  paths: Paths;
  /** Every request the counter got: its idempotency key and the call it names (its tag). */
  arrivals: Array<{ key: string; tag: string }>;
  /** Starts a worker on `vids`; `env` adds to the environment (BYTESEEK_KILL_AT), `node` to node's flags. */
  worker(vids: string[], o?: { env?: Record<string, string>; mode?: string; node?: string[] }): ChildProcess;
  /** What the workers said so far. */
  said(): Said[];
  close(): Promise<void>;
}

/**
 * Declares `count.add`, an http tool POSTing to the local counter on `port`, and grants runs the
 * network to reach it (the policy's default grant): what the chaos test and benches call.
 */
export async function declareCounter(tree: Tree, port: number): Promise<void> {
  await tree.set(
    keys.tool("count.add"),
    json({
      name: "count.add",
      description: "adds one to the counter",
      snippet: "add one",
      params: { type: "object", properties: { tag: { type: "string" } } },
      impl: { kind: "http", url: `http://127.0.0.1:${port}/add`, method: "POST" },
    }),
  );
  const policy = await tree.get(POLICY_KEY);
  const value = (policy?.kind === "json" ? policy.value.value : {}) as Record<string, Json>;
  const grants = (value.grants ?? {}) as Record<string, Json>;
  const def = (grants.default ?? {}) as Record<string, Json>;
  await tree.set(
    POLICY_KEY,
    json({ ...value, grants: { ...grants, default: { ...def, net: [`127.0.0.1:${port}`] } } }),
    { ro: true, force: true },
  );
}

export async function openChaosWorld(prefix: string): Promise<ChaosWorld> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const paths: Paths = {
    db: join(dir, "db"),
    ws: join(dir, "ws"),
    marks: join(dir, "marks.txt"),
    stats: join(dir, "stats.ndjson"),
  };
  await mkdir(paths.ws);
  const arrivals: ChaosWorld["arrivals"] = [];
  const counter = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      const tag = String((JSON.parse(body || "{}") as { tag?: unknown }).tag);
      arrivals.push({ key: String(req.headers["idempotency-key"]), tag });
      res.end('{"ok":true}');
    });
  });
  counter.listen(0, "127.0.0.1");
  await once(counter, "listening");
  const port = (counter.address() as AddressInfo).port;

  const setup = await openTree({ backend: "classic", location: paths.db });
  await seedStore(setup, { builtins: benchBuiltins(paths.marks) });
  await declareCounter(setup, port);
  await setup.close();

  return {
    paths,
    arrivals,
    worker: (vids, o = {}) =>
      spawn(
        process.execPath,
        [...(o.node ?? []), WORKER, JSON.stringify(paths), JSON.stringify(vids), o.mode ?? "together"],
        { env: { ...process.env, ...o.env }, stdio: ["ignore", "pipe", "inherit"] },
      ),
    said: () =>
      readFileSync(paths.stats, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Said),
    async close() {
      counter.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** What the effects and records say once every run is done. */
export interface Tally {
  dupMarks: number;
  dupHttp: number;
  dupTree: number;
  badEdits: number;
  /** http calls resent under their own key (the counter deduplicates them). */
  resent: number;
  /** Calls a resume settled as of unknown outcome, and how many of those the model was told of. */
  unknown: number;
  reported: number;
  /** How resumes settled interrupted calls (by their records' `resumed`). */
  decisions: Map<string, number>;
}

export async function tallyEffects(world: ChaosWorld, vids: readonly string[]): Promise<Tally> {
  const { paths, arrivals } = world;
  const marks = readFileSync(paths.marks, "utf8").split("\n").filter(Boolean);
  const markCounts = new Map<string, number>();
  for (const m of marks) markCounts.set(m, (markCounts.get(m) ?? 0) + 1);
  const keysByTag = new Map<string, Set<string>>();
  for (const a of arrivals) keysByTag.set(a.tag, (keysByTag.get(a.tag) ?? new Set()).add(a.key));
  const t: Tally = {
    dupMarks: [...markCounts.values()].filter((c) => c > 1).length,
    dupHttp: [...keysByTag.values()].filter((k) => k.size > 1).length,
    dupTree: 0,
    badEdits: 0,
    resent: arrivals.length - keysByTag.size,
    unknown: 0,
    reported: 0,
    decisions: new Map(),
  };
  const tree = await openTree({ backend: "classic", location: paths.db });
  try {
    for (const vid of vids) {
      const n = await tree.get(`/bench/${vid}/n`);
      if ((n?.version ?? 0) > 2) t.dupTree++;
      let text = "";
      try {
        text = readFileSync(join(paths.ws, `${vid}.txt`), "utf8");
      } catch {}
      if (text !== "two\n") t.badEdits++;
      const records = await tree.list(recordsDir(vid), { limit: 1000 });
      const session = await tree.list(sessionDir(vid), { limit: 1000 });
      const told = session.children
        .map((c) => (c.kind === "json" ? (c.value?.value as unknown as ChatMessage) : undefined))
        .filter((m): m is Extract<ChatMessage, { role: "tool" }> => m?.role === "tool");
      for (const c of records.children) {
        const rec = c.kind === "index" ? undefined : readRecord(c.key, c);
        const resumed = rec?.details.resumed;
        if (typeof resumed === "string") t.decisions.set(resumed, (t.decisions.get(resumed) ?? 0) + 1);
        if (rec?.details.code !== "outcome_unknown") continue;
        t.unknown++;
        const id = rec.origin?.id;
        if (told.some((m) => m.toolCallId === id && /whether it took effect is unknown/.test(m.content)))
          t.reported++;
      }
    }
  } finally {
    await tree.close();
  }
  return t;
}

/** CPU seconds (user + system) of this process's children that ended, from /proc (Linux; clock ticks of 1/100 s). */
export function childrenCpuS(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? [];
  // after "pid (comm) ": state is field 3, cutime 16 and cstime 17 → indexes 13 and 14 here
  return (Number(fields[13]) + Number(fields[14])) / 100;
}
