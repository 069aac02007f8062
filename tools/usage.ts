import type { Logger } from "pino";
import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";
import { type Json, json } from "../tree/value.js";
import type { ToolKind } from "./errors.js";

/** The accounting node of a run. Other parts (the agent loop's token counts) add their own fields. */
export const usageKey = (vid: string): string => `/byteseek/usage/${vid}`;

/** The one counter calls to names that name no tool share (in `tools`). */
export const UNKNOWN_TOOLS = "(unknown)";

/** One call's contribution to its run's counters. */
export interface UsageDelta {
  tool: string;
  kind: ToolKind;
  ms: number;
}

/**
 * The tool part of `/byteseek/usage/<vid>`:
 * `{calls, kinds: {ok: n, …}, tools: {"edit.read": {calls, ms, kinds: {…}}}, …other fields kept}`.
 */
export interface ToolUsage {
  calls: number;
  kinds: Record<string, number>;
  tools: Record<string, { calls: number; ms: number; kinds: Record<string, number> }>;
}

/**
 * Counters per tool and per kind, exact under concurrency: the increments of one run are grouped
 * (each flush takes every delta queued meanwhile) and each flush is a compare-and-set loop, so
 * no update is lost to another writer of the same node either. `add` resolves once its delta is
 * stored; it rejects only if the store keeps failing.
 */
export function createUsageCounter(tree: Tree, logger: Logger) {
  const queues = new Map<string, { deltas: UsageDelta[]; waiters: Array<(err?: unknown) => void> }>();
  const flushing = new Set<string>();

  async function flush(vid: string): Promise<void> {
    flushing.add(vid);
    try {
      for (;;) {
        const q = queues.get(vid);
        if (!q || q.deltas.length === 0) break;
        queues.delete(vid);
        try {
          await applyAll(vid, q.deltas);
          for (const w of q.waiters) w();
        } catch (err) {
          for (const w of q.waiters) w(err);
        }
      }
    } finally {
      flushing.delete(vid);
    }
  }

  async function applyAll(vid: string, deltas: UsageDelta[]): Promise<void> {
    const key = usageKey(vid);
    for (let attempt = 0; ; attempt++) {
      const node = await tree.get(key);
      const base =
        node && node.kind === "json" && isObject(node.value.value)
          ? (node.value.value as Record<string, Json>)
          : {};
      const next = applyDeltas(base, deltas);
      try {
        await tree.set(key, json(next as unknown as Json), {
          ifVersion: node && node.kind !== "index" ? node.version : 0,
          ro: true,
          force: true,
        });
        return;
      } catch (err) {
        if (!isTreeError(err, "TREE_VERSION_MISMATCH") || attempt >= 50) throw err;
        logger.debug({ vid, attempt }, "usage counter raced, retrying");
      }
    }
  }

  return {
    add(vid: string, delta: UsageDelta): Promise<void> {
      return new Promise<void>(function enqueue(resolve, reject) {
        let q = queues.get(vid);
        if (!q) {
          q = { deltas: [], waiters: [] };
          queues.set(vid, q);
        }
        q.deltas.push(delta);
        q.waiters.push((err) => (err === undefined ? resolve() : reject(err)));
        if (!flushing.has(vid)) void flush(vid);
      });
    },
  };
}

function applyDeltas(base: Record<string, Json>, deltas: UsageDelta[]): Record<string, unknown> {
  const kinds = { ...(isObject(base.kinds) ? (base.kinds as Record<string, number>) : {}) };
  const tools = { ...(isObject(base.tools) ? (base.tools as unknown as ToolUsage["tools"]) : {}) };
  let calls = typeof base.calls === "number" ? base.calls : 0;
  for (const d of deltas) {
    calls++;
    kinds[d.kind] = (kinds[d.kind] ?? 0) + 1;
    const prev = tools[d.tool];
    const t = prev
      ? { calls: prev.calls, ms: prev.ms, kinds: { ...prev.kinds } }
      : { calls: 0, ms: 0, kinds: {} };
    t.calls++;
    t.ms = Math.round((t.ms + d.ms) * 1000) / 1000;
    t.kinds[d.kind] = (t.kinds[d.kind] ?? 0) + 1;
    tools[d.tool] = t;
  }
  return { ...base, calls, kinds, tools };
}

function isObject(v: unknown): boolean {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
