import type { Logger } from "pino";
import { z } from "zod";
import { keys } from "../../shared/keys.js";
import { isTreeError } from "../../tree/errors.js";
import type { Tree, TreeNode, TxnOp, WriteResult } from "../../tree/types.js";
import { docFamily, docValue, parseDoc, writeDoc } from "../doc/read-write.js";
import type { ToolKind } from "../errors.js";
import { RecordDoc, recordsDir, storedRecord, type ToolRecord, writeRecord } from "./records.js";

/** The accounting node of a run. Other parts (the agent loop's token counts) add their own fields. */
export const usageKey = keys.usage;

const KindCounts = z.record(z.string(), z.number());

/**
 * What `/byteseek/usage/<vid>` holds: the runtime's call counters (`calls`, `kinds`, `tools`) and
 * the agent loop's (`turns`, `steps`, `tokens`); every field optional, each added by its writer.
 * An upstream's sampling during a call adds `samples` and its tokens to `tokens` with the call.
 */
const UsageFields = z.object({
  calls: z.number().optional(),
  kinds: KindCounts.optional(),
  tools: z.record(z.string(), z.object({ calls: z.number(), ms: z.number(), kinds: KindCounts })).optional(),
  turns: z.number().optional(),
  steps: z.number().optional(),
  tokens: z.object({ input: z.number().optional(), output: z.number().optional() }).optional(),
  /** Samples of the run's model its tools' MCP servers asked for (their tokens are in `tokens`). */
  samples: z.number().optional(),
  /**
   * Of `samples`, those that finished after their call's record was written (an upstream that did
   * not wait for its sample): counted here and in `tokens`, not in any record's `details.asked`.
   */
  lateSamples: z.number().optional(),
  /**
   * Samples stopped when their call ended (timed out, aborted) before the model answered: not in
   * `samples`, and what they spent is not in `tokens` (a provider reports none for a reply cut short).
   */
  stoppedSamples: z.number().optional(),
});
export const Usage = UsageFields.loose();
export type Usage = z.infer<typeof Usage>;

/** The usage family (tools/doc/docs.ts names it). */
export const UsageDoc = docFamily("a run's usage counters", Usage);

/** The one counter calls to names that name no tool share (in `tools`). */
export const UNKNOWN_TOOLS = "(unknown)";

/** Samples of the run's model for an upstream: how many were answered, their tokens, and how many were stopped. */
export interface Sampled {
  samples: number;
  input: number;
  output: number;
  /** Stopped by their call's end before an answer (their tokens unknown). */
  stopped?: number;
}

/** One call's contribution to its run's counters. */
export interface UsageDelta {
  tool: string;
  kind: ToolKind;
  ms: number;
  /** The run's model sampled for the call's upstream: how often, and the tokens. */
  sampled?: Sampled;
}

/**
 * The tool part of `/byteseek/usage/<vid>`:
 * `{calls, kinds: {ok: n, …}, tools: {"edit.read": {calls, ms, kinds: {…}}}, …other fields kept}`.
 */
export type ToolUsage = Required<Pick<Usage, "calls" | "kinds" | "tools">>;

/**
 * Most calls one write stores. A transaction holds at most 128 operations, and on etcd each
 * append is more than one etcd operation (the record, its directory's sequence) besides the
 * counters and their kept version: 32 leaves room, and more waiting calls take the next write.
 */
const MAX_BATCH = 32;

/** How often a write whose counters another writer changed meanwhile is tried again before going apart. */
const MAX_ATTEMPTS = 50;

interface PendingCall {
  record: ToolRecord;
  /** The record's key when its `started` record is there already: the result replaces it. */
  at?: string | undefined;
  delta: UsageDelta;
  done: (key: string | undefined) => void;
}

/**
 * Stores each call's record (`/byteseek/tool/<vid>/<n>`) and its run's counters (`usageKey`) in
 * one tree transaction: the records appended, the counters set, guarded by a compare on the
 * counters' version — one commit per call, and exact under concurrency (another writer of the
 * node, another process on the same etcd, makes the compare fail: the transaction's failure
 * branch reads the node again, nothing was written, and the write is tried again on that).
 * Calls of one run waiting meanwhile go in the same transaction (dense numbers, in order).
 *
 * If the transaction cannot be stored (a record too large even shortened, the node raced too
 * often, the store failing) each record is written on its own (shortened further when too large)
 * and the counters after it, as two writes, so a call is still recorded and counted.
 */
export function createCallLog(tree: Tree, logger: Logger) {
  const queues = new Map<string, PendingCall[]>();
  const flushing = new Set<string>();

  async function flush(vid: string): Promise<void> {
    flushing.add(vid);
    try {
      for (;;) {
        const q = queues.get(vid);
        if (!q || q.length === 0) break;
        const batch = q.splice(0, MAX_BATCH);
        if (q.length === 0) queues.delete(vid);
        const keys = await together(vid, batch);
        for (const [i, p] of batch.entries()) p.done(keys[i]);
      }
    } finally {
      flushing.delete(vid);
    }
  }

  async function together(vid: string, batch: PendingCall[]): Promise<Array<string | undefined>> {
    const key = usageKey(vid);
    const deltas = batch.map((p) => p.delta);
    const appends: TxnOp[] = batch.map((p): TxnOp => {
      const value = docValue(RecordDoc, storedRecord(p.record));
      return p.at === undefined
        ? { op: "append", key: recordsDir(vid), value, vid, ro: true }
        : { op: "set", key: p.at, value, vid, ro: true, force: true };
    });
    let node: TreeNode | undefined;
    try {
      node = await tree.get(key);
    } catch (err) {
      logger.warn({ err, vid }, "cannot read the usage counters; storing the records and counters apart");
      return apart(vid, batch);
    }
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        // a malformed counter node (DOC_MALFORMED) is logged below; the records are stored apart
        const next = applyDeltas(counters(key, node), deltas);
        const res = await tree.txn({
          compare: [{ key, target: "version", value: node?.version ?? 0 }],
          success: [...appends, { op: "set", key, value: docValue(UsageDoc, next), ro: true, force: true }],
          failure: [{ op: "get", key }],
        });
        if (res.succeeded) return res.results.slice(0, batch.length).map((r) => (r as WriteResult).key);
        node = (res.results[0] as TreeNode | null) ?? undefined;
        logger.debug({ vid, attempt }, "usage counter raced, retrying");
      } catch (err) {
        logger.warn({ err, vid }, "cannot store the call records with their counters; storing them apart");
        return apart(vid, batch);
      }
    }
    logger.warn({ vid }, "the usage counters kept changing under the call records; storing them apart");
    return apart(vid, batch);
  }

  async function apart(vid: string, batch: PendingCall[]): Promise<Array<string | undefined>> {
    const keys: Array<string | undefined> = [];
    for (const p of batch) keys.push(await writeRecord(tree, logger, vid, p.record, p.at));
    try {
      await count(
        vid,
        batch.map((p) => p.delta),
      );
    } catch (err) {
      logger.error({ err, vid }, "cannot update the usage counters");
    }
    return keys;
  }

  function count(vid: string, deltas: UsageDelta[]): Promise<void> {
    return update(vid, (usage) => applyDeltas(usage, deltas));
  }

  /** Sets the run's counters to `change` of them, read again when another writer changed them meanwhile. */
  async function update(vid: string, change: (usage: Usage) => Usage): Promise<void> {
    const key = usageKey(vid);
    for (let attempt = 0; ; attempt++) {
      const node = await tree.get(key);
      try {
        await writeDoc(tree, UsageDoc, key, change(counters(key, node)), {
          ifVersion: node && node.kind !== "index" ? node.version : 0,
          ro: true,
          force: true,
        });
        return;
      } catch (err) {
        if (!isTreeError(err, "TREE_VERSION_MISMATCH") || attempt >= MAX_ATTEMPTS) throw err;
        logger.debug({ vid, attempt }, "usage counter raced, retrying");
      }
    }
  }

  return {
    /**
     * Stores the call's record (appended, or at `at`: the key of its `started` record) and adds
     * its delta to the run's counters; resolves with the record's key once both are stored, or
     * undefined when the record could not be (logged).
     */
    write(vid: string, record: ToolRecord, delta: UsageDelta, at?: string): Promise<string | undefined> {
      return new Promise<string | undefined>(function enqueue(resolve) {
        let q = queues.get(vid);
        if (!q) {
          q = [];
          queues.set(vid, q);
        }
        q.push({ record, at, delta, done: resolve });
        if (!flushing.has(vid)) void flush(vid);
      });
    },
    /**
     * Adds samples that finished after their call's record was written to the run's counters
     * (`samples`, `tokens`, `lateSamples`) in a write of their own; rejects when it cannot be stored.
     */
    lateSamples(vid: string, sampled: Sampled): Promise<void> {
      return update(vid, (usage) => {
        const added = addSampled(usage, sampled);
        return sampled.samples > 0
          ? { ...added, lateSamples: (usage.lateSamples ?? 0) + sampled.samples }
          : added;
      });
    },
  };
}

/** The usage node's fields, or none when it is absent; `DOC_MALFORMED` when it holds something else. */
function counters(key: string, node: TreeNode | undefined): Usage {
  return (node?.kind === "index" ? undefined : parseDoc(UsageDoc, key, node)) ?? {};
}

function applyDeltas(base: Usage, deltas: UsageDelta[]): Usage {
  const kinds = { ...base.kinds };
  const tools = { ...base.tools };
  let calls = base.calls ?? 0;
  let spent = base;
  for (const d of deltas) {
    calls++;
    if (d.sampled) spent = addSampled(spent, d.sampled);
    kinds[d.kind] = (kinds[d.kind] ?? 0) + 1;
    const prev = tools[d.tool];
    const t = prev
      ? { calls: prev.calls, ms: prev.ms, kinds: { ...prev.kinds } }
      : { calls: 0, ms: 0, kinds: {} as Record<string, number> };
    t.calls++;
    t.ms = Math.round((t.ms + d.ms) * 1000) / 1000;
    t.kinds[d.kind] = (t.kinds[d.kind] ?? 0) + 1;
    tools[d.tool] = t;
  }
  return { ...spent, calls, kinds, tools };
}

/** The counters with `sampled` added: answered samples and their tokens, and stopped ones (fields only where there are any). */
function addSampled(usage: Usage, sampled: Sampled): Usage {
  const stopped = sampled.stopped ?? 0;
  return {
    ...usage,
    ...(sampled.samples > 0
      ? {
          samples: (usage.samples ?? 0) + sampled.samples,
          tokens: {
            ...usage.tokens,
            input: (usage.tokens?.input ?? 0) + sampled.input,
            output: (usage.tokens?.output ?? 0) + sampled.output,
          },
        }
      : {}),
    ...(stopped > 0 ? { stoppedSamples: (usage.stoppedSamples ?? 0) + stopped } : {}),
  };
}
