/**
 * The tools failing lately, kept in memory: every call record of the last `horizonMs` (a week: the
 * overview's widest window), as few fields as the answer needs, fed by the records index's load and
 * watch (tools/records/recent-calls.ts), so `GET /v1/overview` reads no record. It answers what
 * the scan of the records (tools/records/recent-failures.ts, the reference kept beside it) answers:
 * the same time of a record (`recordTime`), the same tally (`tallyFailures`).
 */
import type { RecentFailures, ToolFailures } from "./failure-schemas.js";
import { recordKeyParts, StoredRecord } from "./records.js";

/** The overview's widest window: a question reaching further back is answered by the scan. */
export const FAILURE_HORIZON_MS = 7 * 24 * 3_600_000;

/** What the tally reads of a record that ended (started ones and unreadable ones count for nothing). */
export interface TalliedCall {
  name: string;
  kind: string;
  isError: boolean;
  text: string;
}

/**
 * When a record was last written, from the record itself (a watch event carries no mtime): the
 * call's arrival plus its duration — its start for a `started` record, its result for a done one.
 * Undefined for a value that is no call record (no numeric `ts`): it is neither counted nor the
 * edge of the window.
 */
export function recordTime(value: unknown): number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { ts, ms } = value as { ts?: unknown; ms?: unknown };
  if (typeof ts !== "number") return undefined;
  return ts + (typeof ms === "number" ? ms : 0);
}

/** The call a record tallies: undefined for one still running or not a valid record. */
export function talliedCall(value: unknown): TalliedCall | undefined {
  const parsed = StoredRecord.safeParse(value);
  if (!parsed.success || parsed.data.state === "started") return undefined;
  const { name, kind, isError, text } = parsed.data;
  // only a failure's first line is ever shown: keep no more
  return { name, kind, isError, text: isError ? (text.split("\n")[0] ?? "").slice(0, 200) : "" };
}

/** Counts `call` (recorded at `key`, at `time`) into `byTool`, keeping each tool's newest failure. */
export function tallyFailures(
  byTool: Map<string, ToolFailures>,
  key: string,
  time: number,
  call: TalliedCall,
): void {
  let t = byTool.get(call.name);
  if (!t) {
    t = { name: call.name, failures: 0, calls: 0, last: { key: "", kind: "", text: "", ts: 0 } };
    byTool.set(call.name, t);
  }
  t.calls++;
  if (!call.isError) return;
  t.failures++;
  if (time > t.last.ts || (time === t.last.ts && laterKey(key, t.last.key)))
    t.last = { key, kind: call.kind, text: call.text, ts: time };
}

/**
 * Between two records written in the same millisecond, the one taken as the later: in one run the
 * higher number, across runs the run named later — whatever order they were tallied in.
 */
function laterKey(a: string, b: string): boolean {
  const cut = a.lastIndexOf("/");
  const runA = a.slice(0, cut);
  const runB = b.slice(0, b.lastIndexOf("/"));
  if (runA !== runB) return runA > runB;
  return Number(a.slice(cut + 1)) > Number(b.slice(cut + 1));
}

/** The answer from a tally: tools with failures, most first, then the latest, then by name. */
export function failuresAnswer(
  since: number,
  byTool: Map<string, ToolFailures>,
  limit: number,
  scanned: number,
  truncated: boolean,
): RecentFailures {
  const tools = [...byTool.values()]
    .filter((t) => t.failures > 0)
    .sort((a, b) => b.failures - a.failures || b.last.ts - a.last.ts || a.name.localeCompare(b.name))
    .slice(0, limit);
  return { since, tools, scanned, ...(truncated ? { truncated } : {}) };
}

export interface FailureWindow {
  /** A record key written with `value` (a put seen by the load or the watch). */
  put(key: string, value: unknown): void;
  /** A key deleted, or every key below a deleted directory (`prefix` ends in `/`). */
  remove(keyOrPrefix: string): void;
  clear(): void;
  /** The tools failing since `since` (at most `limit`), from the records it holds. */
  answer(since: number, limit: number): RecentFailures;
}

interface Held {
  time: number;
  call: TalliedCall | undefined;
}

export function createFailureWindow({
  horizonMs = FAILURE_HORIZON_MS,
  now = Date.now,
}: {
  horizonMs?: number;
  now?: () => number;
} = {}): FailureWindow {
  /** By record key, in the order first written (a run's records in order). */
  const held = new Map<string, Held>();

  return {
    put(key, value) {
      if (!recordKeyParts(key)) return;
      const time = recordTime(value);
      if (time === undefined || time < now() - horizonMs) {
        held.delete(key);
        return;
      }
      held.set(key, { time, call: talliedCall(value) });
    },
    remove(keyOrPrefix) {
      if (!keyOrPrefix.endsWith("/")) {
        held.delete(keyOrPrefix);
        return;
      }
      for (const key of held.keys()) if (key.startsWith(keyOrPrefix)) held.delete(key);
    },
    clear() {
      held.clear();
    },
    answer(since, limit) {
      const edge = now() - horizonMs;
      const byTool = new Map<string, ToolFailures>();
      let scanned = 0;
      for (const [key, h] of held) {
        if (h.time < edge) {
          held.delete(key);
          continue;
        }
        if (h.time < since) continue;
        scanned++;
        if (h.call) tallyFailures(byTool, key, h.time, h.call);
      }
      return failuresAnswer(since, byTool, limit, scanned, false);
    },
  };
}
