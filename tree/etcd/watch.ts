/**
 * watch() on etcd, fed by the tree's one etcd watch of its node keys (local-reads.ts), which
 * decodes each revision once for every subscriber. Every tree write is one etcd revision, whose
 * node puts and deletes etcd delivers together; they are turned back into the tree's events
 * (events.ts) and each subscriber keeps those under its prefix.
 *
 * A subscriber knows the next revision it owes its reader (`next`). When the shared stream is
 * live from revision R (at subscription, or again after the stream was lost) and `next <= R`,
 * the revisions from `next` to R are read by a catch-up: a watch of its own from `next`, whose
 * revisions up to R are handed over as they come, while the shared stream's revisions after R
 * wait; revision R itself, or the first catch-up revision past it, ends it (the waiting ones
 * follow, then live ones).
 * Every revision is handed over once, in order, as `next` only moves forward. etcd answers a
 * compacted `next` with its compact revision: TREE_COMPACTED, as before. (A catch-up's end is
 * seen on its own stream, since etcd's headers and progress answers do not prove a replaying
 * watcher has sent everything up to them; when R changed nothing in the tree and nobody writes,
 * it waits for the next write.)
 */
import type { Logger } from "pino";
import { NODE } from "../encoding.js";
import { TreeError } from "../errors.js";
import { parseKey } from "../path.js";
import type { WatchBatch, WatchOptions } from "../types.js";
import type { TreeValue } from "../value.js";
import { AsyncQueue, filterBatch } from "../watch-hub.js";
import type { EtcdCalls } from "./calls.js";
import { byRevision, type FeedRevision, revisionOf } from "./events.js";
import type { LocalReads } from "./local-reads.js";
import type { WatchResponse } from "./wire.js";

export interface WatchDeps {
  rpc: EtcdCalls;
  prefix: string;
  /** The shared stream. */
  feed: Pick<LocalReads, "subscribe" | "fedRev">;
  logger?: Logger;
  closers: Set<() => void>;
  isClosed(): boolean;
  /** The highest revision this server knows of (a live watch starts after it). */
  known(): number;
  onRev(rev: number): void;
  onCompacted(rev: number): void;
  /** A value as it was at `rev` (for events whose value was too large to log inline). */
  valueAt(key: string, rev: number): Promise<TreeValue | undefined>;
}

type Item =
  | { batch: WatchBatch; lazy?: Set<string> }
  | { compacted: number; current: number }
  | { error: Error };

/** A catch-up from `next` to `target`, holding the shared stream's later revisions meanwhile. */
interface CatchUp {
  target: number;
  waiting: FeedRevision[];
  stopped: boolean;
  backoff: number;
  cancel?: () => void;
}

export async function* watchTree(
  deps: WatchDeps,
  prefix: string,
  o: WatchOptions = {},
): AsyncGenerator<WatchBatch> {
  parseKey(prefix);
  if (deps.isClosed()) throw new TreeError("TREE_CLOSED", "the tree is closed");
  if (o.signal?.aborted) return;
  const queue = new AsyncQueue<Item>();
  const nodes = Buffer.from(deps.prefix + NODE, "utf8");
  const nodesEnd = Buffer.from(deps.prefix + String.fromCharCode(NODE.charCodeAt(0) + 1), "utf8");
  // The next revision owed: a live watch starts after what this server has seen now, so a write
  // made while the shared stream is still being set up is caught up, not lost.
  let next =
    o.fromRev === undefined ? Math.max(deps.known(), deps.feed.fedRev()) + 1 : Math.max(1, o.fromRev);
  let catching: CatchUp | undefined;
  let stopped = false;

  const deliver = (r: FeedRevision) => {
    if (stopped || r.rev < next) return;
    next = r.rev + 1;
    deps.onRev(r.rev);
    const batch = filterBatch(prefix, r);
    if (batch) queue.push(r.lazy ? { batch, lazy: r.lazy } : { batch });
  };

  const endCatchUp = (c: CatchUp) => {
    c.stopped = true;
    c.cancel?.();
    c.cancel = undefined;
    if (catching !== c) return;
    catching = undefined;
    for (const r of c.waiting) deliver(r);
  };

  const runCatchUp = async (c: CatchUp) => {
    if (c.stopped || stopped) return;
    let lost = false;
    const lose = (why: unknown) => {
      if (lost || c.stopped) return;
      lost = true;
      c.cancel?.();
      c.cancel = undefined;
      deps.logger?.warn({ err: why, next }, "etcd watch catch-up lost; reconnecting");
      setTimeout(() => void runCatchUp(c), c.backoff);
      c.backoff = Math.min(c.backoff * 2, 2000);
    };
    try {
      const stream = await deps.rpc.watch();
      // Cancelling a stream makes it emit a CANCELLED error: never let one go unheard.
      stream.on("error", () => {});
      if (c.stopped || stopped) {
        stream.cancel();
        return;
      }
      c.cancel = () => stream.cancel();
      stream.on("data", (res: WatchResponse) => {
        if (c.stopped || lost) return;
        if (res.canceled) {
          const compacted = res.compact_revision;
          deps.onRev(res.header.revision);
          if (compacted > 0) queue.push({ compacted, current: res.header.revision });
          else queue.push({ error: new Error(res.cancel_reason || "etcd cancelled the watch") });
          c.stopped = true;
          c.cancel?.();
          return;
        }
        if (res.created) {
          c.backoff = 100;
          return;
        }
        for (const group of byRevision(res.events)) {
          const rev = group[0]!.kv.mod_revision;
          if (rev > c.target) return endCatchUp(c);
          deliver(revisionOf(deps.prefix.length, group, (key) => key.startsWith(prefix)));
          if (rev === c.target) return endCatchUp(c);
        }
      });
      stream.on("error", (err: unknown) => lose(err));
      stream.on("end", () => lose("stream ended"));
      stream.write({ create_request: { key: nodes, range_end: nodesEnd, start_revision: next } });
    } catch (err) {
      lose(err);
    }
  };

  const unsubscribe = deps.feed.subscribe({
    prefix,
    live(rev) {
      if (catching) {
        // Its waiting revisions may have a gap after them (the stream was lost): start again.
        catching.stopped = true;
        catching.cancel?.();
        catching = undefined;
      }
      if (next > rev) return;
      catching = { target: rev, waiting: [], stopped: false, backoff: 100 };
      void runCatchUp(catching);
    },
    revision(r) {
      if (catching) catching.waiting.push(r);
      else deliver(r);
    },
  });

  const stop = () => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    if (catching) {
      catching.stopped = true;
      catching.cancel?.();
      catching = undefined;
    }
    queue.close();
  };
  o.signal?.addEventListener("abort", stop, { once: true });
  deps.closers.add(stop);
  try {
    for (;;) {
      const item = await queue.next();
      if (item === undefined || stopped) return;
      if ("compacted" in item) {
        deps.onCompacted(item.compacted);
        throw new TreeError(
          "TREE_COMPACTED",
          `revision ${o.fromRev} is compacted; the oldest retained is ${item.compacted}: re-list, then watch from revision ${item.current + 1}`,
          { compactRev: item.compacted, currentRev: item.current, relistFrom: item.current + 1 },
        );
      }
      if ("error" in item)
        throw new TreeError(
          "TREE_UNAVAILABLE",
          `etcd ended the watch: ${item.error.message}`,
          {},
          item.error,
        );
      const batch = await withLazyValues(deps, item.batch, item.lazy);
      if (!stopped) yield batch;
    }
  } finally {
    o.signal?.removeEventListener("abort", stop);
    deps.closers.delete(stop);
    stop();
  }
}

/** Reads the values too large to have been carried in the revision's records. */
async function withLazyValues(deps: WatchDeps, batch: WatchBatch, lazy?: Set<string>): Promise<WatchBatch> {
  if (!lazy) return batch;
  for (const [i, ev] of batch.events.entries()) {
    if (lazy.has(ev.key) && ev.type === "put" && ev.value === undefined) {
      const value = await deps.valueAt(ev.key, ev.rev);
      if (value !== undefined) batch.events[i] = { ...ev, value };
    }
  }
  return batch;
}
