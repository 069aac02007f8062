/**
 * The tree over any abstract-level store (classic-level on disk, memory-level in memory).
 *
 * Writes go through one commit pipeline: operations queue up, run one after another against an
 * in-memory overlay (so each sees the ones before it, and compare-and-set and append are exact),
 * and everything queued while the previous commit was on disk is written in one LevelDB batch —
 * group commit, so 32 concurrent writers cost a few batches, not 32. Each operation that changes
 * something takes the next global revision; the batch also writes each revision's change-log entry,
 * which watchers resume from.
 */
import type { AbstractBatchOptions } from "abstract-level";
import type { Logger } from "pino";
import { type LoggedRevision, openChangeLog } from "./change-log.js";
import { keyFromNodeKey, NODE } from "./encoding.js";
import { TreeError } from "./errors.js";
import { type HistoryLimit, historyRule } from "./history-limit.js";
import { createLevelReads } from "./level-reads.js";
import { type Db, Mutation, RecordCache, type Stored } from "./mutation.js";
import { exportTree, parseImport } from "./ndjson.js";
import { NodeCache } from "./node-cache.js";
import { parseKey } from "./path.js";
import { createPlanner } from "./plan.js";
import { eventFromRecord, type NodeRecord } from "./record.js";
import { checkValueSize } from "./rules.js";
import type { ExportEntry, ImportResult, Tree, WatchBatch, WatchOptions } from "./types.js";
import { upgradeLayout } from "./upgrade.js";
import type { TreeValue } from "./value.js";
import { AsyncQueue, filterBatch, WatchHub } from "./watch-hub.js";
import { fixRevs, PENDING } from "./write-store.js";

export interface TreeOptions {
  /**
   * Previous versions kept per value for history(): a count, or counts by directory; default 10
   * under /byteseek/ and none elsewhere (see history-limit.ts).
   */
  historyLimit?: HistoryLimit;
  /** Revisions of change log kept for watch resume; default 10000. */
  retainRevisions?: number;
  /** Memory for nodes recently read, estimated in bytes; default 32 MiB (0 turns the cache off). */
  cacheBytes?: number;
  /** Largest value accepted, in bytes; default 1 MiB. */
  maxValueBytes?: number;
  /**
   * `always` fsyncs every commit (but a group whose every write asked for `deferSync`);
   * `never` (default) survives a process crash, not a power cut.
   */
  sync?: "always" | "never";
  /**
   * With sync `always`: how long a commit may wait for the writers of the previous group to come
   * back and share its fsync, ms; default 1, 0 turns it off.
   */
  commitDelayMs?: number;
  logger?: Logger;
  /** Called after the store is closed (the backend's own close). */
  onClose?: () => Promise<void>;
}

interface Pending {
  /** Most operations run synchronously; deltree, clear, txn and import read ranges and await. */
  run: (m: Mutation) => unknown;
  /** The write needs no fsync of its own (`SetOptions.deferSync`). */
  deferSync: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Builds a Tree on an open abstract-level database with string keys and values. */
export async function createLevelTree(db: Db, options: TreeOptions = {}): Promise<Tree> {
  const versionsKept = historyRule(options.historyLimit);
  const retain = Math.max(1, options.retainRevisions ?? 10_000);
  const maxValueBytes = options.maxValueBytes ?? 1024 * 1024;
  // classic-level honours `sync`; abstract-level's types do not declare it.
  const syncAlways = options.sync === "always";
  const synced = { sync: true } as AbstractBatchOptions<string, string>;
  const unsynced = { sync: false } as AbstractBatchOptions<string, string>;
  const hub = new WatchHub();
  const records = new RecordCache();
  const cache = new NodeCache(options.cacheBytes ?? 32 * 1024 * 1024);
  const closers = new Set<() => void>();

  // The latest revision is the change log's newest; its oldest retained one bounds resumes.
  const log = await openChangeLog(db, retain);
  await upgradeLayout(db);
  let nextRev = log.committed + 1;
  let closed = false;

  const queue: Pending[] = [];
  let draining = false;
  /** How many operations the last group held, and how many others were queued when it was on disk. */
  let lastGroup = 0;
  let queuedBehind = 0;
  /** A commit waiting for its group to fill (sync always): woken when the queue reaches `size`. */
  let filling: { size: number; wake: () => void } | undefined;
  const commitDelayMs = options.commitDelayMs ?? 1;

  function enqueue<T>(run: (m: Mutation) => T | Promise<T>, deferSync = false): Promise<T> {
    if (closed) return Promise.reject(new TreeError("TREE_CLOSED", "the tree is closed"));
    return new Promise<T>((resolve, reject) => {
      queue.push({ run, deferSync, resolve: resolve as (v: unknown) => void, reject });
      if (!draining) void drain();
      else if (filling && queue.length >= filling.size) filling.wake();
    });
  }

  /** Waits until `size` operations are queued, or `ms` have passed. */
  function fill(size: number, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => filling?.wake(), ms);
      filling = {
        size,
        wake() {
          clearTimeout(timer);
          filling = undefined;
          resolve();
        },
      };
    });
  }

  /**
   * Commits the queue group by group: everything queued while the previous batch was on its way
   * to disk goes out in the next one. (A two-stage pipeline, building the next group while a batch
   * is written, measured slower: it halves the groups, and the main thread, not the disk, is the
   * limit.)
   */
  async function drain(): Promise<void> {
    draining = true;
    try {
      while (queue.length > 0) {
        // Turns of the event loop first, while the queue still grows (three at most): writers
        // whose requests are already in (an HTTP server's sockets) join this group instead of the
        // next, so a group shares one write (one fsync with sync always). A lone writer (the last
        // group was its own write alone, and nobody else is queued) does not wait. The figures are
        // in bench/RESULTS.md.
        const lone = lastGroup === 1 && queue.length === 1;
        for (let turn = 0, seen = lone ? queue.length : -1; turn < 3 && queue.length !== seen; turn++) {
          seen = queue.length;
          await new Promise<void>((r) => setImmediate(r));
        }
        // With an fsync a commit, a group is worth filling: writers that alternate between two
        // half groups (those just answered are not back yet) pay one fsync per half. So the
        // writers of the group just answered get up to commitDelayMs to come back and join those
        // that queued behind it (as PostgreSQL's commit_delay).
        // (A queue of writes that all defer their fsync has none to share.)
        const writers = queuedBehind + lastGroup;
        const fsyncs = syncAlways && queue.some((p) => !p.deferSync);
        if (fsyncs && commitDelayMs > 0 && lastGroup > 1 && queue.length < writers)
          await fill(writers, commitDelayMs);
        const group = queue.splice(0);
        lastGroup = group.length;
        await write(await prepare(group));
      }
    } finally {
      draining = false;
      queuedBehind = 0;
    }
  }

  interface Prepared {
    overlay: Map<string, Stored>;
    logs: LoggedRevision[];
    done: Array<{ p: Pending; value: unknown }>;
    startRev: number;
  }

  const allocRev = (): number => nextRev++;

  /** Runs each operation of a group in order; one that throws is rejected and leaves no trace. */
  async function prepare(group: Pending[]): Promise<Prepared> {
    const overlay = new Map<string, Stored>();
    const prepared: Prepared = { overlay, logs: [], done: [], startRev: nextRev };
    // One clock reading a group: its operations are written together.
    const groupOptions = { history: versionsKept, now: Date.now() };
    for (const p of group) {
      const before = nextRev;
      const m = new Mutation(db, overlay, allocRev, groupOptions, records);
      try {
        let value = p.run(m);
        if (value instanceof Promise) value = await value;
        fixRevs(value, m.rev === 0 ? nextRev - 1 : m.rev);
        if (m.rev !== 0) prepared.logs.push({ rev: m.rev, events: m.events });
        prepared.done.push({ p, value });
      } catch (err) {
        m.undo();
        nextRev = before;
        p.reject(err);
      }
    }
    return prepared;
  }

  /** Writes a prepared group in one batch and answers its callers. */
  async function write({ overlay, logs, done, startRev }: Prepared): Promise<void> {
    if (done.length === 0) return;
    // A chained batch: abstract-level's array form costs about three times as much per entry.
    const batch = db.batch();
    const nodes: Array<{ sk: string; rec: NodeRecord | null; length: number }> = [];
    try {
      for (const [key, v] of overlay) {
        const text = v === null ? undefined : JSON.stringify(v);
        if (text === undefined) batch.del(key);
        else batch.put(key, text);
        if (key.startsWith(NODE))
          nodes.push({ sk: key, rec: v as NodeRecord | null, length: text?.length ?? 0 });
      }
      log.write(batch, logs);
      // With sync always, a group is fsynced unless every write in it deferred its fsync: LevelDB
      // appends each batch to its log in order, so the next synced batch takes a deferred one to
      // disk with it (and a killed process never loses it: it is in the OS's cache already).
      const sync = syncAlways && done.some(({ p }) => !p.deferSync);
      await batch.write(sync ? synced : unsynced); // an empty batch just closes
    } catch (err) {
      await batch.close().catch(() => {}); // idempotent; frees the native batch when write never ran
      nextRev = startRev;
      const failure = new TreeError(
        "TREE_UNAVAILABLE",
        `the store failed to write: ${(err as Error).message}`,
        {},
        err,
      );
      for (const { p } of done) p.reject(failure);
      return;
    }
    for (const { sk, rec, length } of nodes) {
      records.written(sk, rec, length);
      cache.forget(keyFromNodeKey(sk));
    }
    if (logs.length > 0) {
      log.committedUpTo(logs[logs.length - 1]!.rev);
      if (hub.size > 0)
        hub.publish(
          logs.map(({ rev, events }) => ({ rev, events: events.map((e) => eventFromRecord(rev, e)) })),
        );
    }
    // Counted before the callers hear back: one who writes again at once is not queued behind.
    queuedBehind = queue.length;
    for (const { p, value } of done) p.resolve(value);
  }

  const checkSize = (value: TreeValue) => checkValueSize(value, maxValueBytes);
  const plan = createPlanner({ history: versionsKept, maxValueBytes });

  // ---- reads ----

  function checkOpen(): void {
    if (closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
  }

  const { getNode, list, history } = createLevelReads({ db, cache, checkOpen });

  async function* watch(prefix: string, o: WatchOptions = {}): AsyncGenerator<WatchBatch> {
    checkOpen();
    parseKey(prefix);
    const live = new AsyncQueue<WatchBatch>();
    const unsubscribe = hub.subscribe(prefix, (b) => live.push(b));
    const stop = () => live.close();
    o.signal?.addEventListener("abort", stop, { once: true });
    closers.add(stop);
    try {
      if (o.signal?.aborted) return;
      let seen = log.committed;
      if (o.fromRev !== undefined) {
        const upto = log.committed;
        if (o.fromRev < log.oldest && o.fromRev <= upto)
          throw new TreeError(
            "TREE_COMPACTED",
            `revision ${o.fromRev} is compacted; the oldest retained is ${log.oldest}: re-list, then watch from revision ${upto + 1}`,
            { compactRev: log.oldest, currentRev: upto, relistFrom: upto + 1 },
          );
        seen = Math.max(o.fromRev - 1, 0);
        if (o.fromRev <= upto) {
          // Taken in the same tick as the check: a later batch that trims the log cannot take what it reads.
          const snapshot = db.snapshot();
          try {
            for await (const { rev, events } of log.read(o.fromRev, upto, snapshot)) {
              const batch = filterBatch(prefix, { rev, events: events.map((e) => eventFromRecord(rev, e)) });
              if (batch) yield batch;
              seen = rev;
            }
          } catch (err) {
            if (closed) return; // the tree closed under the replay: the watch just ends
            throw err;
          } finally {
            await snapshot.close().catch(() => {}); // already closed with the store when it closed
          }
        }
        seen = Math.max(seen, upto);
      }
      for (;;) {
        const b = await live.next();
        if (b === undefined) return;
        if (b.rev <= seen) continue;
        seen = b.rev;
        yield b;
      }
    } finally {
      o.signal?.removeEventListener("abort", stop);
      closers.delete(stop);
      unsubscribe();
    }
  }

  const tree: Tree = {
    get: (key) => getNode(key),
    set: (key, value, o) => enqueue((m) => plan.set(m, key, value, o), o?.deferSync),
    del: (key, o) => enqueue((m) => plan.del(m, key, o)),
    deltree: (dir, o) => enqueue((m) => plan.deltree(m, dir, o)),
    mkindex: (dir) => enqueue((m) => plan.mkindex(m, dir)),
    list: (dir, o) => list(dir, o),
    append: (dir, value, o) => enqueue((m) => plan.append(m, dir, value, o), o?.deferSync),
    txn: (req) => enqueue((m) => plan.txn(m, req)),
    watch,
    history: (key) => history(key),
    async *export(dir = "/") {
      checkOpen();
      // One snapshot for the whole walk: writes made meanwhile are not seen, half or whole.
      const snapshot = db.snapshot();
      try {
        yield* exportTree(
          {
            get: (k) => getNode(k, snapshot),
            list: (d, o) => list(d, o, snapshot),
            history: (k) => history(k, snapshot),
          },
          dir,
        );
      } finally {
        await snapshot.close();
      }
    },
    async import(entries, io = {}): Promise<ImportResult> {
      const parsed = await parseImport(entries, checkSize);
      return enqueue((m) => {
        plan.importItems(m, parsed, io.force === true);
        return { imported: parsed.length, rev: PENDING };
      });
    },
    clear: () => enqueue((m) => plan.clear(m)),
    revision: () => log.committed,
    compactedRev: () => log.oldest,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      // Let queued writes finish, then end watches and close the store.
      while (draining || queue.length > 0) await new Promise((r) => setTimeout(r, 1));
      for (const stop of closers) stop();
      await db.close();
      await options.onClose?.();
    },
  };
  return tree;
}

export type { ExportEntry };
