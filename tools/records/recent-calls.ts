/**
 * The recent calls of each tool, across every run: what a person reviewing a tool wants to see
 * ("how did its last calls go?") without reading every run's records. Call records live by run
 * (`/byteseek/tool/<vid>/<n>`), so finding one tool's calls means an index by tool name: built from
 * the records on first use (at most `maxScan` of them), then kept current from the tree's watch, so
 * a call recorded (started, then done) shows as soon as its record is written. It keeps the newest
 * `perTool` calls of each tool, and a short preview of each result: memory grows with the tools,
 * not with the calls. The same load and watch keep the tools failing lately (a week of records,
 * tools/records/failure-window.ts): the overview's question reads no record either.
 */

import { dirs } from "../../shared/keys.js";
import { childrenOf } from "../../tree/children.js";
import { followTree } from "../../tree/follow.js";
import type { ListChild, Tree, WatchBatch } from "../../tree/types.js";
import type { ToolKind } from "../errors.js";
import type { RecentFailures } from "./failure-schemas.js";
import { createFailureWindow, FAILURE_HORIZON_MS } from "./failure-window.js";
import { recentFailures } from "./recent-failures.js";
import { recordKeyParts } from "./records.js";

const RECORDS_DIR = dirs.records;

/** One call as the index keeps it. */
export interface RecentCall {
  key: string;
  vid: string;
  n: number;
  kind: ToolKind;
  isError: boolean;
  /** `started`: no result yet; `done` (records older than durable runs say nothing: done). */
  state: "started" | "done";
  /** When the call arrived (ms since the epoch), and how long it took. */
  ts: number;
  ms: number;
  /** The start of what the model was told. */
  text: string;
}

export interface RecentCalls {
  /** The newest calls of `name` first, at most `limit`; `complete` is false when the first scan stopped at `maxScan` records. */
  of(name: string, limit?: number): Promise<{ calls: RecentCall[]; complete: boolean }>;
  /**
   * The tools whose calls failed since `since` (at most `limit`, default 10), as the scan of the
   * records answers (tools/records/recent-failures.ts) — which answers instead when the first read
   * stopped at `maxScan` or `since` is beyond the week kept.
   */
  failures(options: { since: number; limit?: number }): Promise<RecentFailures>;
  close(): void;
}

export interface RecentCallsOptions {
  tree: Tree;
  /** Calls kept per tool (the newest). */
  perTool?: number;
  /** Records read at most by the first scan: past it the index holds what the watch brings. */
  maxScan?: number;
  /** Characters of the result text kept per call. */
  previewChars?: number;
  onError?: (err: unknown) => void;
}

/** The fields of a record the index keeps, read without trusting its shape. */
function callOf(
  key: string,
  value: unknown,
  previewChars: number,
): { name: string; call: RecentCall } | undefined {
  const parts = recordKeyParts(key);
  if (!parts || typeof value !== "object" || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r.name !== "string" || typeof r.kind !== "string" || typeof r.ts !== "number") return undefined;
  const text = typeof r.text === "string" ? r.text : "";
  return {
    name: r.name,
    call: {
      key,
      vid: parts.vid,
      n: parts.n,
      kind: r.kind as ToolKind,
      isError: r.isError === true,
      state: r.state === "started" ? "started" : "done",
      ts: r.ts,
      ms: typeof r.ms === "number" ? r.ms : 0,
      text: text.length > previewChars ? `${text.slice(0, previewChars - 1)}…` : text,
    },
  };
}

/** Whether `a` came after `b`: by time; in the same millisecond, by number in one run, else the one seen last. */
function newer(a: RecentCall, b: RecentCall): boolean {
  if (a.ts !== b.ts) return a.ts > b.ts;
  return a.vid !== b.vid || a.n > b.n;
}

export function createRecentCalls({
  tree,
  perTool = 20,
  maxScan = 100_000,
  previewChars = 200,
  onError,
}: RecentCallsOptions): RecentCalls {
  /** By tool name: its newest calls, newest first. */
  const byTool = new Map<string, RecentCall[]>();
  /** Which tool a record key was filed under (a record's name never changes, but its state does). */
  const toolOfKey = new Map<string, string>();
  const failing = createFailureWindow();
  let complete = true;

  function file(name: string, call: RecentCall): void {
    const calls = byTool.get(name) ?? [];
    const at = calls.findIndex((c) => c.key === call.key);
    if (at >= 0) calls.splice(at, 1);
    // newest first; calls mostly arrive in order, so the insertion point is near the front
    let i = 0;
    while (i < calls.length && !newer(call, calls[i] as RecentCall)) i++;
    if (i >= perTool) return;
    calls.splice(i, 0, call);
    toolOfKey.set(call.key, name);
    for (const dropped of calls.splice(perTool)) toolOfKey.delete(dropped.key);
    byTool.set(name, calls);
  }

  function unfile(key: string): void {
    const name = toolOfKey.get(key);
    if (name === undefined) return;
    toolOfKey.delete(key);
    const calls = byTool.get(name)?.filter((c) => c.key !== key) ?? [];
    if (calls.length) byTool.set(name, calls);
    else byTool.delete(name);
  }

  function apply(batch: WatchBatch): void {
    for (const event of batch.events) {
      if (!event.key.startsWith(RECORDS_DIR)) continue;
      if (event.type === "deltree") {
        for (const key of [...toolOfKey.keys()]) if (key.startsWith(event.key)) unfile(key);
        failing.remove(event.key);
        continue;
      }
      if (event.type === "delete") {
        unfile(event.key);
        failing.remove(event.key);
        continue;
      }
      const value = event.value?.kind === "json" ? event.value.value : undefined;
      failing.put(event.key, value);
      const found = value === undefined ? undefined : callOf(event.key, value, previewChars);
      if (found) file(found.name, found.call);
    }
  }

  async function recordValue(dir: string, child: ListChild): Promise<unknown> {
    const node =
      "value" in child && child.value !== undefined ? child : await tree.get(`${dir}${child.name}`);
    return node && "value" in node && node.value?.kind === "json" ? node.value.value : undefined;
  }

  async function load(): Promise<void> {
    let scanned = 0;
    complete = true;
    for await (const run of childrenOf(tree, RECORDS_DIR)) {
      if (!run.name.endsWith("/")) continue;
      const dir = `${RECORDS_DIR}${run.name}`;
      for await (const child of childrenOf(tree, dir, 500)) {
        if (child.name.endsWith("/")) continue;
        if (++scanned > maxScan) {
          complete = false;
          return;
        }
        const value = await recordValue(dir, child);
        failing.put(`${dir}${child.name}`, value);
        const found = callOf(`${dir}${child.name}`, value, previewChars);
        if (found) file(found.name, found.call);
      }
    }
  }

  // the whole tree, so every batch moves the revision and a question waits for exactly its own
  const follower = followTree({
    tree,
    load,
    apply,
    reset: () => {
      byTool.clear();
      toolOfKey.clear();
      failing.clear();
    },
    onError,
  });

  /** Loaded, and every record written before the question taken in (waiting briefly for the watch). */
  async function current(): Promise<void> {
    await follower.start();
    await follower.caughtUp(tree.syncRevision ? await tree.syncRevision() : tree.revision(), 2000);
  }

  return {
    async of(name, limit = perTool) {
      await current();
      return { calls: (byTool.get(name) ?? []).slice(0, limit), complete };
    },
    async failures({ since, limit = 10 }) {
      if (since < Date.now() - FAILURE_HORIZON_MS) return recentFailures(tree, { since, limit });
      await current();
      return complete ? failing.answer(since, limit) : recentFailures(tree, { since, limit });
    },
    close: follower.close,
  };
}
