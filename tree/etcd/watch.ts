/**
 * watch() on etcd: an etcd watch of the tree's node keys. Every tree write is one etcd revision,
 * whose node puts and deletes etcd delivers together (it never splits a revision); they are
 * turned back into the tree's events (events.ts). etcd replays them from any revision it still
 * retains, then follows live, and answers a compacted one with its compact revision. A dropped
 * stream is re-created from the revision after the last one received, so nothing is missed or
 * seen twice while etcd is away.
 */
import type { Etcd3, IEvent, IWatchResponse } from "etcd3";
import type { Logger } from "pino";
import { NODE } from "../encoding.js";
import { TreeError } from "../errors.js";
import { parseKey } from "../path.js";
import { type EventRecord, eventFromRecord } from "../record.js";
import type { WatchBatch, WatchOptions } from "../types.js";
import type { TreeValue } from "../value.js";
import { AsyncQueue, filterBatch } from "../watch-hub.js";
import { PENDING } from "./attempt.js";
import { headerRev } from "./client.js";
import { eventsOfPuts, type StagedPut } from "./events.js";
import type { EtcdRecord } from "./layout.js";

export interface WatchDeps {
  client: Etcd3;
  prefix: string;
  logger?: Logger;
  closers: Set<() => void>;
  isClosed(): boolean;
  onRev(rev: number): void;
  onCompacted(rev: number): void;
  /** A value as it was at `rev` (for events whose value was too large to log inline). */
  valueAt(key: string, rev: number): Promise<TreeValue | undefined>;
}

type Item = { res: IWatchResponse } | { compacted: number; current: number } | { error: Error };

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
  // Where the next (re)connection starts; undefined: live from when it is created.
  let next = o.fromRev === undefined ? undefined : Math.max(1, o.fromRev);
  let stopped = false;
  let generation = 0;
  let backoff = 100;
  let cancel: (() => void) | undefined;

  const reconnect = (gen: number, why: unknown) => {
    if (stopped || gen !== generation) return;
    generation++;
    cancel?.();
    cancel = undefined;
    deps.logger?.warn({ err: why, next }, "etcd watch stream lost; reconnecting");
    setTimeout(() => void connect(), backoff);
    backoff = Math.min(backoff * 2, 2000);
  };

  const connect = async () => {
    if (stopped) return;
    const gen = generation;
    try {
      const stream = await deps.client.watchClient.watch();
      // Cancelling a stream makes it emit a CANCELLED error: never let one go unheard.
      stream.on("error", () => {});
      if (stopped || gen !== generation) {
        stream.cancel();
        return;
      }
      cancel = () => stream.cancel();
      stream.on("data", (res: IWatchResponse) => {
        if (gen !== generation) return;
        deps.onRev(headerRev(res.header));
        if (res.canceled) {
          const compacted = Number(res.compact_revision);
          if (compacted > 0) queue.push({ compacted, current: headerRev(res.header) });
          else queue.push({ error: new Error(res.cancel_reason || "etcd cancelled the watch") });
          return;
        }
        if (res.created) {
          backoff = 100;
          if (next === undefined) next = headerRev(res.header) + 1;
          return;
        }
        const last = res.events[res.events.length - 1];
        if (last?.kv) next = Number(last.kv.mod_revision) + 1;
        if (res.events.length > 0) queue.push({ res });
      });
      stream.on("error", (err: unknown) => reconnect(gen, err));
      stream.on("end", () => reconnect(gen, "stream ended"));
      stream.write({
        create_request: {
          key: nodes,
          range_end: nodesEnd,
          ...(next === undefined ? {} : { start_revision: next }),
        },
      });
    } catch (err) {
      reconnect(gen, err);
    }
  };

  const stop = () => {
    stopped = true;
    cancel?.();
    queue.close();
  };
  o.signal?.addEventListener("abort", stop, { once: true });
  deps.closers.add(stop);
  void connect();
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
      for (const group of byRevision(item.res.events)) {
        const batch = await decode(deps, prefix, group);
        if (batch && !stopped) yield batch;
      }
    }
  } finally {
    o.signal?.removeEventListener("abort", stop);
    deps.closers.delete(stop);
    stop();
  }
}

/** A watch response's events, one group per revision, in order. */
function byRevision(events: IEvent[]): IEvent[][] {
  const groups: IEvent[][] = [];
  let rev = -1;
  for (const ev of events) {
    if (!ev.kv) continue;
    const r = Number(ev.kv.mod_revision);
    if (r !== rev) groups.push([]);
    rev = r;
    groups[groups.length - 1]!.push(ev);
  }
  return groups;
}

/**
 * One revision's node changes as the tree's events (those under `prefix`). A revision holds one
 * write, or several committed together (group-commit.ts); each write's node puts start with its
 * marker (the record carrying its id `w`), so the puts are cut there and each write's events are
 * the ones it carries or the ones its own puts rebuild.
 */
async function decode(deps: WatchDeps, prefix: string, group: IEvent[]): Promise<WatchBatch | undefined> {
  const rev = Number(group[0]!.kv.mod_revision);
  const writes: StagedPut[][] = [];
  for (const ev of group) {
    if (ev.type !== "Put") continue;
    const rec = JSON.parse(ev.kv.value.toString("utf8")) as EtcdRecord;
    const put = {
      sk: ev.kv.key.toString("utf8").slice(deps.prefix.length),
      rec,
      created: Number(ev.kv.version) === 1,
    };
    if (rec.w !== undefined || writes.length === 0) writes.push([put]);
    else writes[writes.length - 1]!.push(put);
  }
  const records: EventRecord[] = [];
  const lazy = new Set<string>();
  for (const puts of writes) {
    const carried = puts.find((p) => p.rec.x)?.rec.x;
    if (!carried) records.push(...eventsOfPuts(puts));
    else
      for (const r of carried) {
        records.push(r);
        if (r.lz === 1) lazy.add(r.key);
      }
  }
  const batch = filterBatch(prefix, {
    rev,
    events: records.map((r) => {
      const ev = eventFromRecord(rev, r);
      if (ev.prevRev === PENDING) ev.prevRev = rev;
      return ev;
    }),
  });
  if (!batch || lazy.size === 0) return batch;
  for (const [i, ev] of batch.events.entries()) {
    if (lazy.has(ev.key) && ev.type === "put" && ev.value === undefined) {
      const value = await deps.valueAt(ev.key, rev);
      if (value !== undefined) batch.events[i] = { ...ev, value };
    }
  }
  return batch;
}
