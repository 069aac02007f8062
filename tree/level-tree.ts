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
import type { AbstractBatchOptions, AbstractSnapshot } from "abstract-level";
import type { Logger } from "pino";
import {
  childNodeKey,
  childrenRange,
  histKey,
  histListKey,
  keyFromNodeKey,
  LOG,
  logKey,
  nodeKey,
} from "./encoding.js";
import { TreeError } from "./errors.js";
import { type Db, Mutation, readRaw, type Stored } from "./mutation.js";
import { exportTree, parseImport } from "./ndjson.js";
import { isSystemName, nameOf, parentOf, parseDirKey, parseKey, parseValueKey } from "./path.js";
import {
  type EventRecord,
  eventFromRecord,
  histFromRecord,
  type NodeRecord,
  nodeFromRecord,
  storedValue,
} from "./record.js";
import { checkTxnSize, compareHolds } from "./txn.js";
import type {
  DelOptions,
  DelResult,
  DeltreeResult,
  ExportEntry,
  HistoryEntry,
  ImportResult,
  ListChild,
  ListOptions,
  ListResult,
  SetOptions,
  Tree,
  TreeNode,
  TxnCompare,
  TxnOp,
  TxnRequest,
  TxnResult,
  WatchBatch,
  WatchOptions,
  WriteResult,
} from "./types.js";
import { checkValue, type TreeValue, valueSize } from "./value.js";
import { AsyncQueue, filterBatch, WatchHub } from "./watch-hub.js";

export interface TreeOptions {
  /** Previous versions kept per key for history(); default 10. */
  historyLimit?: number;
  /** Revisions of change log kept for watch resume; default 10000. */
  retainRevisions?: number;
  /** Largest value accepted, in bytes; default 1 MiB. */
  maxValueBytes?: number;
  /** `always` fsyncs every commit; `never` (default) survives a process crash, not a power cut. */
  sync?: "always" | "never";
  logger?: Logger;
  /** Called after the store is closed (the backend's own close). */
  onClose?: () => Promise<void>;
}

interface Pending {
  run: (m: Mutation) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Builds a Tree on an open abstract-level database with string keys and values. */
export async function createLevelTree(db: Db, options: TreeOptions = {}): Promise<Tree> {
  const historyLimit = options.historyLimit ?? 10;
  const retain = Math.max(1, options.retainRevisions ?? 10_000);
  const maxValueBytes = options.maxValueBytes ?? 1024 * 1024;
  // classic-level honours `sync`; abstract-level's types do not declare it.
  const batchOptions = { sync: options.sync === "always" } as AbstractBatchOptions<string, string>;
  const hub = new WatchHub();
  const closers = new Set<() => void>();

  // The latest revision is the newest change-log entry; the oldest retained one bounds resumes.
  const last = await db.keys({ gte: LOG, lt: "s", reverse: true, limit: 1 }).all();
  const first = await db.keys({ gte: LOG, lt: "s", limit: 1 }).all();
  let committedRev = last[0] ? Number(last[0].slice(1)) : 0;
  let oldestRev = first[0] ? Number(first[0].slice(1)) : 1;
  let nextRev = committedRev + 1;
  let closed = false;

  const queue: Pending[] = [];
  let draining = false;

  function enqueue<T>(run: (m: Mutation) => Promise<T>): Promise<T> {
    if (closed) return Promise.reject(new TreeError("TREE_CLOSED", "the tree is closed"));
    return new Promise<T>((resolve, reject) => {
      queue.push({ run, resolve: resolve as (v: unknown) => void, reject });
      if (!draining) void drain();
    });
  }

  async function drain(): Promise<void> {
    draining = true;
    try {
      while (queue.length > 0) {
        const group = queue.splice(0);
        await commitGroup(group);
      }
    } finally {
      draining = false;
    }
  }

  async function commitGroup(group: Pending[]): Promise<void> {
    const overlay = new Map<string, Stored>();
    const logs: Array<{ rev: number; events: EventRecord[] }> = [];
    const done: Array<{ p: Pending; value: unknown }> = [];
    const startRev = nextRev;
    for (const p of group) {
      const before = nextRev;
      const m = new Mutation(db, overlay, () => nextRev++, { historyLimit, now: Date.now() });
      try {
        const value = await p.run(m);
        for (const [k, v] of m.local) overlay.set(k, v);
        if (m.rev !== 0) logs.push({ rev: m.rev, events: m.events });
        done.push({ p, value });
      } catch (err) {
        nextRev = before;
        p.reject(err);
      }
    }
    if (done.length === 0) return;
    const ops: Array<{ type: "put"; key: string; value: string } | { type: "del"; key: string }> = [];
    for (const [key, v] of overlay) {
      ops.push(v === null ? { type: "del", key } : { type: "put", key, value: JSON.stringify(v) });
    }
    for (const { rev, events } of logs) {
      ops.push({ type: "put", key: logKey(rev), value: JSON.stringify(events) });
      if (rev - retain >= 1) ops.push({ type: "del", key: logKey(rev - retain) });
    }
    try {
      if (ops.length > 0) await db.batch(ops, batchOptions);
    } catch (err) {
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
    if (logs.length > 0) {
      committedRev = logs[logs.length - 1]!.rev;
      oldestRev = Math.max(oldestRev, committedRev - retain + 1);
      hub.publish(
        logs.map(({ rev, events }) => ({ rev, events: events.map((e) => eventFromRecord(rev, e)) })),
      );
    }
    for (const { p, value } of done) p.resolve(value);
  }

  function checkSize(value: TreeValue): void {
    checkValue(value);
    const size = valueSize(value);
    if (size > maxValueBytes)
      throw new TreeError(
        "TREE_VALUE_TOO_LARGE",
        `value is ${size} bytes, over the limit of ${maxValueBytes} bytes; store it in smaller pieces`,
        { size, limit: maxValueBytes },
      );
  }

  function result(m: Mutation, key: string, version: number): WriteResult {
    return { key, rev: m.rev === 0 ? nextRev - 1 : m.rev, version };
  }

  function versionMismatch(key: string, want: number, rec: NodeRecord | undefined): TreeError {
    const current = rec ? nodeFromRecord(key, rec) : undefined;
    return new TreeError(
      "TREE_VERSION_MISMATCH",
      `version mismatch on ${key}: expected ${want}, found ${rec ? rec.ver : 0} (${rec ? "it was changed" : "it does not exist"}); read it again and retry`,
      { key, expected: want, actual: rec ? rec.ver : 0, current },
    );
  }

  // ---- write operations, each run inside a Mutation ----

  async function doSet(m: Mutation, key: string, value: TreeValue, o: SetOptions = {}): Promise<WriteResult> {
    parseValueKey(key);
    checkSize(value);
    const prev = await m.readNode(key);
    if (o.ifVersion !== undefined && (prev?.ver ?? 0) !== o.ifVersion)
      throw versionMismatch(key, o.ifVersion, prev);
    if (o.create && prev)
      throw new TreeError("TREE_EXISTS", `${key} already exists (create-only write)`, { key });
    if (prev?.ro && !o.force)
      throw new TreeError(
        "TREE_READ_ONLY",
        `${key} is read-only; force the write or mark it writable first`,
        { key },
      );
    await m.ensureDir(parentOf(key)!);
    const rev = m.bump();
    const rec: NodeRecord = {
      k: value.kind,
      v: storedValue(value),
      ver: (prev?.ver ?? 0) + 1,
      cr: prev?.cr ?? rev,
      mr: rev,
      mt: m.options.now,
    };
    if (o.ro ?? prev?.ro === 1) rec.ro = 1;
    const vid = o.vid ?? prev?.vid;
    if (vid !== undefined) rec.vid = vid;
    await m.putValue(key, rec, prev);
    if (!prev) await m.adjustCount(parentOf(key)!, +1);
    m.emit({ t: "put", key, k: value.kind, v: rec.v, p: prev?.mr ?? 0, ver: rec.ver });
    return result(m, key, rec.ver);
  }

  async function doDel(m: Mutation, key: string, o: DelOptions = {}): Promise<DelResult> {
    const parsed = parseKey(key);
    const prev = await m.readNode(key);
    if (o.ifVersion !== undefined && (prev?.ver ?? 0) !== o.ifVersion)
      throw versionMismatch(key, o.ifVersion, prev);
    if (!prev) return { ...result(m, key, 0), deleted: false };
    if (prev.ro && !o.force)
      throw new TreeError(
        "TREE_READ_ONLY",
        `${key} is read-only; force the delete or mark it writable first`,
        { key },
      );
    if (parsed.dir) {
      if (key === "/")
        throw new TreeError("TREE_NOT_EMPTY", "the root cannot be deleted; use clear to empty the store");
      if ((prev.n ?? 0) > 0)
        throw new TreeError(
          "TREE_NOT_EMPTY",
          `${key} is not empty (${prev.n} children); use deltree to remove it`,
          {
            key,
            count: prev.n,
          },
        );
      m.bump();
      m.write(nodeKey(key), null);
    } else {
      m.bump();
      m.deleteValue(key, prev);
    }
    await m.adjustCount(parentOf(key)!, -1);
    m.emit({ t: "delete", key, k: prev.k, p: prev.mr });
    return { ...result(m, key, 0), deleted: true };
  }

  async function doDeltree(
    m: Mutation,
    dir: string,
    o: { force?: boolean; ifVersion?: number } = {},
  ): Promise<DeltreeResult> {
    parseDirKey(dir);
    const prev = await m.readNode(dir);
    if (o.ifVersion !== undefined && (prev?.ver ?? 0) !== o.ifVersion)
      throw versionMismatch(dir, o.ifVersion, prev);
    if (!prev && dir !== "/") return { ...result(m, dir, 0), removed: 0 };
    if (prev?.ro && !o.force)
      throw new TreeError("TREE_READ_ONLY", `${dir} is read-only; force the delete`, { key: dir });
    m.bump();
    const removed = await m.removeSubtree(dir, o.force === true);
    m.emit({ t: "deltree", key: dir, k: "index", p: prev?.mr ?? 0 });
    return { ...result(m, dir, 0), removed };
  }

  async function doMkindex(m: Mutation, dir: string): Promise<WriteResult> {
    parseDirKey(dir);
    const rec = await m.ensureDir(dir);
    return result(m, dir, rec.ver);
  }

  async function doAppend(
    m: Mutation,
    dir: string,
    value: TreeValue,
    o: { vid?: string; ro?: boolean } = {},
  ): Promise<WriteResult> {
    parseDirKey(dir);
    checkSize(value);
    const rec = await m.ensureDir(dir);
    // Fresh read: ensureDir may have just created it inside this mutation.
    let n = (await m.readNode(dir))?.s ?? rec.s ?? 0;
    while (await m.readNode(`${dir}${n}`)) n++;
    const key = `${dir}${n}`;
    const res = await doSet(m, key, value, {
      create: true,
      ...(o.vid ? { vid: o.vid } : {}),
      ro: o.ro ?? false,
    });
    const dirRec = (await m.readNode(dir))!;
    m.write(nodeKey(dir), { ...dirRec, s: n + 1 });
    return res;
  }

  async function holds(m: Mutation, c: TxnCompare): Promise<boolean> {
    parseKey(c.key);
    const rec = await m.readNode(c.key);
    return compareHolds(
      c,
      rec && {
        kind: rec.k,
        ...(rec.v !== undefined ? { value: rec.v } : {}),
        version: rec.ver,
        createRev: rec.cr,
        modRev: rec.mr,
      },
    );
  }

  async function runTxnOp(m: Mutation, op: TxnOp): Promise<WriteResult | TreeNode | null> {
    switch (op.op) {
      case "set":
        return doSet(m, op.key, op.value, {
          ...(op.ro !== undefined ? { ro: op.ro } : {}),
          ...(op.force ? { force: true } : {}),
          ...(op.vid !== undefined ? { vid: op.vid } : {}),
        });
      case "del":
        return doDel(m, op.key, op.force ? { force: true } : {});
      case "deltree":
        return doDeltree(m, op.key, op.force ? { force: true } : {});
      case "mkindex":
        return doMkindex(m, op.key);
      case "get": {
        parseKey(op.key);
        const rec = await m.readNode(op.key);
        return rec ? nodeFromRecord(op.key, rec) : null;
      }
      default:
        throw new TreeError(
          "TREE_TXN_INVALID",
          `unknown txn operation ${JSON.stringify((op as { op: unknown }).op)}`,
        );
    }
  }

  async function doTxn(m: Mutation, req: TxnRequest): Promise<TxnResult> {
    const compare = req.compare ?? [];
    const success = req.success ?? [];
    const failure = req.failure ?? [];
    checkTxnSize(req);
    let ok = true;
    for (const c of compare) if (!(await holds(m, c))) ok = false;
    const results: TxnResult["results"] = [];
    for (const op of ok ? success : failure) results.push(await runTxnOp(m, op));
    return { succeeded: ok, rev: m.rev === 0 ? nextRev - 1 : m.rev, results };
  }

  // ---- reads ----

  function checkOpen(): void {
    if (closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
  }

  async function getNode(key: string, snapshot?: AbstractSnapshot): Promise<TreeNode | undefined> {
    checkOpen();
    parseKey(key);
    const raw = await readRaw(db, nodeKey(key), snapshot);
    if (raw === undefined) {
      if (key === "/")
        return {
          key: "/",
          kind: "index",
          count: 0,
          version: 0,
          createRev: 0,
          modRev: 0,
          mtime: 0,
          ro: false,
        };
      return undefined;
    }
    return nodeFromRecord(key, JSON.parse(raw) as NodeRecord);
  }

  async function list(dir: string, o: ListOptions = {}, snapshot?: AbstractSnapshot): Promise<ListResult> {
    checkOpen();
    parseDirKey(dir);
    if (o.limit !== undefined && (!Number.isInteger(o.limit) || o.limit < 1))
      throw new TreeError("TREE_INVALID_VALUE", `limit must be a positive integer, got ${o.limit}`);
    const limit = Math.min(o.limit ?? 1000, 100_000);
    if (dir !== "/" && (await readRaw(db, nodeKey(dir), snapshot)) === undefined)
      throw new TreeError("TREE_NOT_FOUND", `no directory ${dir}`, { key: dir });
    const range = childrenRange(dir);
    const gt = o.after !== undefined ? childNodeKey(dir, o.after) : undefined;
    const children: ListChild[] = [];
    let hasMore = false;
    const bounds = gt !== undefined && gt >= range.gte ? { gt, lt: range.lt } : range;
    const it = db.iterator(snapshot ? { ...bounds, snapshot } : bounds);
    try {
      for (;;) {
        const entries = await it.nextv(Math.min(limit + 1, 1000));
        if (entries.length === 0) break;
        for (const [sk, raw] of entries) {
          const key = keyFromNodeKey(sk);
          const name = nameOf(key);
          if (!o.system && isSystemName(name)) continue;
          if (children.length === limit) {
            hasMore = true;
            break;
          }
          const node = nodeFromRecord(key, JSON.parse(raw) as NodeRecord);
          if (node.kind !== "index" && o.values === false) {
            const { value: _omit, ...meta } = node;
            children.push({ ...meta, name });
          } else children.push({ ...node, name });
        }
        if (hasMore) break;
      }
    } finally {
      await it.close();
    }
    const res: ListResult = { key: dir, children };
    if (hasMore && children.length > 0) res.next = children[children.length - 1]!.name;
    return res;
  }

  async function history(key: string): Promise<HistoryEntry[]> {
    checkOpen();
    parseValueKey(key);
    const raw = await readRaw(db, nodeKey(key));
    let revs: number[] = [];
    if (raw !== undefined) revs = (JSON.parse(raw) as NodeRecord).h ?? [];
    else {
      const kept = await readRaw(db, histListKey(key));
      if (kept !== undefined) revs = JSON.parse(kept) as number[];
    }
    const values = await db.getMany(revs.map((r) => histKey(key, r)));
    const out: HistoryEntry[] = [];
    for (const v of values) if (v !== undefined) out.push(histFromRecord(key, v));
    return out.reverse();
  }

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
      let seen = committedRev;
      if (o.fromRev !== undefined) {
        if (o.fromRev < oldestRev && o.fromRev <= committedRev)
          throw new TreeError(
            "TREE_COMPACTED",
            `revision ${o.fromRev} is compacted; the oldest retained is ${oldestRev}: re-list, then watch from revision ${committedRev + 1}`,
            { compactRev: oldestRev, currentRev: committedRev, relistFrom: committedRev + 1 },
          );
        seen = Math.max(o.fromRev - 1, 0);
        const upto = committedRev;
        for await (const [k, raw] of db.iterator({ gte: logKey(o.fromRev), lte: logKey(upto) })) {
          const rev = Number(k.slice(1));
          const batch = filterBatch(prefix, {
            rev,
            events: (JSON.parse(raw) as EventRecord[]).map((e) => eventFromRecord(rev, e)),
          });
          if (batch) yield batch;
          seen = rev;
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

  async function doClear(m: Mutation): Promise<WriteResult> {
    m.bump();
    await m.removeSubtree("/", true);
    m.emit({ t: "deltree", key: "/", k: "index" });
    return result(m, "/", 0);
  }

  const tree: Tree = {
    get: (key) => getNode(key),
    set: (key, value, o) => enqueue((m) => doSet(m, key, value, o)),
    del: (key, o) => enqueue((m) => doDel(m, key, o)),
    deltree: (dir, o) => enqueue((m) => doDeltree(m, dir, o)),
    mkindex: (dir) => enqueue((m) => doMkindex(m, dir)),
    list: (dir, o) => list(dir, o),
    append: (dir, value, o) => enqueue((m) => doAppend(m, dir, value, o)),
    txn: (req) => enqueue((m) => doTxn(m, req)),
    watch,
    history,
    async *export(dir = "/") {
      checkOpen();
      // One snapshot for the whole walk: writes made meanwhile are not seen, half or whole.
      const snapshot = db.snapshot();
      try {
        yield* exportTree({ get: (k) => getNode(k, snapshot), list: (d, o) => list(d, o, snapshot) }, dir);
      } finally {
        await snapshot.close();
      }
    },
    async import(entries): Promise<ImportResult> {
      const parsed = await parseImport(entries, checkSize);
      return enqueue(async (m) => {
        for (const e of parsed) {
          if (e.dir) await doMkindex(m, e.key);
          else await doSet(m, e.key, e.value, { force: true, ro: e.ro, ...(e.vid ? { vid: e.vid } : {}) });
        }
        return { imported: parsed.length, rev: m.rev === 0 ? nextRev - 1 : m.rev };
      });
    },
    clear: () => enqueue(doClear),
    revision: () => committedRev,
    compactedRev: () => oldestRev,
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
