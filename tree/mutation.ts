/**
 * One write operation's view of the store while it runs inside a commit group: reads see the
 * committed store, then what the group (earlier operations and this one) wrote. Writes go into
 * the group's overlay at once, and each remembers what it replaced, so a failed operation is
 * undone and leaves no trace (all or nothing per operation, and per transaction).
 */
import type { AbstractLevel, AbstractSnapshot } from "abstract-level";
import { depthOf, histKey, histListKey, keyFromNodeKey, NODE, nodeKey, subtreeRangeAt } from "./encoding.js";
import type { HistoryRule } from "./history-limit.js";
import { type Restore, restoredEvent, restoredHistory } from "./ndjson.js";
import { MAX_DEPTH, parentOf } from "./path.js";
import { type EventRecord, type HistRecord, type NodeRecord, STORE_FORMAT } from "./record.js";
import { notADirectory, readOnlyBelow } from "./rules.js";
import { SizedCache } from "./sized-cache.js";
import type { TreeNode } from "./types.js";

// biome-ignore lint/suspicious/noExplicitAny: abstract-level's format parameter differs per backend; only string keys and values are used.
export type Db = AbstractLevel<any, string, string>;

/** A stored entry: a node or history record, a list of revs, or null for a deletion. */
export type Stored = NodeRecord | HistRecord | number[] | null;

export interface MutationOptions {
  history: HistoryRule;
  now: number;
}

/**
 * Node records recently read or written by the write path. Every write under a directory reads
 * that directory's record (to check it exists and count the new child), and every overwrite reads
 * the value's previous record (for its version and history), so keeping the hot ones in memory
 * saves a store read and a JSON parse each. Write-through: a commit remembers what its batch wrote
 * once the batch is on disk, so the cache never holds what the store does not. Bounded by an
 * estimate of the bytes held (see SizedCache). The records are shared, so nothing may change
 * one in place (every writer builds a new record).
 */
export class RecordCache {
  readonly #records: SizedCache<NodeRecord>;

  constructor(maxBytes = 16 * 1024 * 1024) {
    this.#records = new SizedCache(maxBytes);
  }

  get(sk: string): NodeRecord | undefined {
    return this.#records.get(sk);
  }

  /** Keeps `rec`, read from the store as `textLength` characters under `sk`. */
  remember(sk: string, rec: NodeRecord, textLength: number): void {
    this.#records.set(sk, rec, textLength);
  }

  /**
   * A commit wrote `rec` under `sk`: directories are kept, and so are values the write path read
   * before (overwrites of a hot key). A value written once is not: a stream of new keys would only
   * fill the cache with records nobody reads again (and cost the garbage collector dearly).
   */
  written(sk: string, rec: NodeRecord | null, textLength: number): void {
    if (rec === null) this.#records.delete(sk);
    else if (rec.k === "index" || this.#records.has(sk)) this.remember(sk, rec, textLength);
  }
}

/** What an overlay entry was before an operation wrote it: `ABSENT` when it had none. */
const ABSENT = Symbol("absent");

export class Mutation {
  /** Each write of this operation: the key, and what the overlay held before it. */
  readonly #undo: Array<[string, Stored | typeof ABSENT]> = [];
  readonly events: EventRecord[] = [];
  /** The revision this operation writes at, once it writes anything. */
  rev = 0;

  constructor(
    private readonly db: Db,
    private readonly group: Map<string, Stored>,
    private readonly allocRev: () => number,
    readonly options: MutationOptions,
    private readonly records: RecordCache,
  ) {}

  /** The revision of this operation, allocated at its first write. */
  bump(): number {
    if (this.rev === 0) this.rev = this.allocRev();
    return this.rev;
  }

  /** Reads synchronously: both embedded backends answer point reads from LevelDB's memtable and caches. */
  read<T extends Stored>(sk: string): T | undefined {
    const staged = this.staged(sk);
    if (staged !== ABSENT) return (staged ?? undefined) as T | undefined;
    const cached = this.records.get(sk);
    if (cached) return cached as T;
    const raw = readRaw(this.db, sk);
    if (raw === undefined) return undefined;
    const parsed = JSON.parse(raw) as T;
    if (sk.startsWith(NODE)) this.records.remember(sk, parsed as NodeRecord, raw.length);
    return parsed;
  }

  write(sk: string, value: Stored): void {
    this.#undo.push([sk, this.staged(sk)]);
    this.group.set(sk, value);
  }

  /** What the group wrote under `sk` (null: deleted), or ABSENT if it wrote nothing there. */
  private staged(sk: string): Stored | typeof ABSENT {
    const v = this.group.get(sk);
    return v !== undefined || this.group.has(sk) ? (v ?? null) : ABSENT;
  }

  /** Takes back every write of this operation (it failed), latest first. */
  undo(): void {
    for (let i = this.#undo.length - 1; i >= 0; i--) {
      const [sk, before] = this.#undo[i]!;
      if (before === ABSENT) this.group.delete(sk);
      else this.group.set(sk, before);
    }
    this.#undo.length = 0;
  }

  readNode(key: string): NodeRecord | undefined {
    return this.read<NodeRecord>(nodeKey(key));
  }

  /** Keys in [gte, lt) as this operation sees them (the store and the group's writes merged). */
  async rangeKeys(gte: string, lt: string): Promise<string[]> {
    const keys = new Set<string>(await this.db.keys({ gte, lt }).all());
    for (const [k, v] of this.group) {
      if (k >= gte && k < lt) {
        if (v === null) keys.delete(k);
        else keys.add(k);
      }
    }
    return [...keys].sort();
  }

  emit(ev: Omit<EventRecord, "p"> & { p?: number }): void {
    if (ev.p === undefined) ev.p = 0;
    this.events.push(ev as EventRecord);
  }

  /** Makes sure directory `dir` exists, creating missing parents (mkdir -p). */
  ensureDir(dir: string): NodeRecord {
    const existing = this.readNode(dir);
    if (existing) {
      if (existing.k !== "index") throw corrupt(dir);
      return existing;
    }
    const rec: NodeRecord = { k: "index", ver: 1, cr: 0, mr: 0, mt: this.options.now, n: 0, s: 0 };
    if (dir === "/") {
      rec.fmt = STORE_FORMAT;
      this.write(nodeKey(dir), rec);
      return rec;
    }
    const parent = parentOf(dir)!;
    // Kept history below the parent may be for keys below this directory (removed, now made again).
    if (this.ensureDir(parent).hk === 1) rec.hk = 1;
    const rev = this.bump();
    rec.cr = rev;
    rec.mr = rev;
    this.write(nodeKey(dir), rec);
    this.adjustCount(parent, +1);
    this.emit({ t: "put", key: dir, k: "index", ver: 1 });
    return rec;
  }

  /** Changes the child count of an existing directory (whose current record the caller may hold). */
  adjustCount(dir: string, delta: number, current?: NodeRecord): void {
    const rec = current ?? this.readNode(dir);
    if (!rec) return;
    this.write(nodeKey(dir), { ...rec, n: Math.max(0, (rec.n ?? 0) + delta) });
  }

  /** Marks directory `dir`, if it exists: a value below it was deleted and its history kept. */
  markHistoryBelow(dir: string): void {
    const rec = this.readNode(dir);
    if (rec && rec.hk !== 1) this.write(nodeKey(dir), { ...rec, hk: 1 });
  }

  /** Writes a value node (whose directory's record is `parent`), keeping the previous version in history. */
  putValue(key: string, rec: NodeRecord, prev: NodeRecord | undefined, parent: NodeRecord): void {
    const limit = this.options.history.limitFor(key);
    let hist: number[];
    if (prev) {
      hist = [...(prev.h ?? [])];
      // A version this same operation wrote (a txn setting a key twice) was never visible at any
      // revision: nothing to keep.
      if (limit > 0 && prev.mr !== this.rev) {
        this.write(histKey(key, prev.mr), toHist(prev, false));
        hist.push(prev.mr);
      }
    } else if (parent.hk !== 1) {
      hist = []; // no deletion below this directory kept history: nothing to pick up
    } else {
      // A key created again after a delete picks up the history its deletion kept.
      const kept = this.read<number[]>(histListKey(key));
      hist = kept ? [...kept] : [];
      if (kept) this.write(histListKey(key), null);
    }
    while (hist.length > limit) this.write(histKey(key, hist.shift()!), null);
    if (hist.length > 0) rec.h = hist;
    else delete rec.h;
    this.write(nodeKey(key), rec);
  }

  /**
   * Rewrites the value this operation just wrote at `key` as an import line describes it: its
   * version and retained versions (in place of any the key had here).
   */
  restoreValue(key: string, r: Restore): void {
    const rec = this.readNode(key)!;
    const next: NodeRecord = { ...rec };
    if (r.version !== undefined) next.ver = r.version;
    for (const s of rec.h ?? []) this.write(histKey(key, s), null);
    const kept = restoredHistory(r.history ?? [], this.options.history.limitFor(key));
    for (const { suffix, rec: h } of kept) this.write(histKey(key, suffix), h);
    if (kept.length > 0) next.h = kept.map((k) => k.suffix);
    else delete next.h;
    this.write(nodeKey(key), next);
    restoredEvent(this.events, key, next.ver);
  }

  /** Removes directory `dir`: history kept below it is now below its parent, which must say so. */
  removeDir(dir: string): void {
    const rec = this.readNode(dir);
    this.write(nodeKey(dir), null);
    if (rec?.hk === 1) this.markHistoryBelow(parentOf(dir)!);
  }

  /**
   * Deletes a value node, keeping its last value in history: as it was, at its own modRev (the
   * delete's revision is the event's), unless this same operation wrote it.
   */
  deleteValue(key: string, prev: NodeRecord): void {
    const limit = this.options.history.limitFor(key);
    const hist = [...(prev.h ?? [])];
    if (limit > 0 && prev.mr !== this.bump()) {
      this.write(histKey(key, prev.mr), toHist(prev, true));
      hist.push(prev.mr);
    }
    while (hist.length > limit) this.write(histKey(key, hist.shift()!), null);
    this.write(histListKey(key), hist.length > 0 ? hist : null);
    this.write(nodeKey(key), null);
    if (hist.length > 0) this.markHistoryBelow(parentOf(key)!);
  }

  /**
   * Removes `dir` and everything below it; returns how many nodes went. Unless forced, a
   * read-only key anywhere below refuses the whole removal. Each removed value keeps its last
   * version in history, as `del` does, so a folder can be restored.
   */
  async removeSubtree(dir: string, force: boolean): Promise<number> {
    const wipe = dir === "/"; // clear: the whole store goes, history included
    const doomed: Array<{ sk: string; rec: NodeRecord }> = [];
    for (let depth = depthOf(dir) + 1; depth <= MAX_DEPTH; depth++) {
      const { gte, lt } = subtreeRangeAt(dir, depth);
      const keys = await this.rangeKeys(gte, lt);
      if (keys.length === 0) break;
      for (const sk of keys) {
        const rec = this.read<NodeRecord>(sk)!;
        if (rec.ro && !force) throw readOnlyBelow(keyFromNodeKey(sk), dir);
        doomed.push({ sk, rec });
      }
    }
    // Deepest first: a directory learns of the history its values and subdirectories kept before
    // it goes itself, and hands it up.
    for (const { sk, rec } of doomed.reverse()) {
      if (wipe) this.write(sk, null);
      else if (rec.k === "index") this.removeDir(keyFromNodeKey(sk));
      else this.deleteValue(keyFromNodeKey(sk), rec);
    }
    if (wipe)
      for (const prefix of ["h", "H"])
        for (const k of await this.rangeKeys(prefix, String.fromCharCode(prefix.charCodeAt(0) + 1)))
          this.write(k, null);
    let removed = doomed.length;
    if (dir === "/") {
      const root = this.readNode("/");
      if (root) {
        const { hk: _gone, ...rest } = root; // wiped, history included
        this.write(nodeKey("/"), { ...rest, n: 0 });
      }
    } else {
      this.removeDir(dir);
      removed++;
      this.adjustCount(parentOf(dir)!, -1);
    }
    return removed;
  }
}

/**
 * Reads one stored entry. Both embedded backends answer point reads synchronously (from LevelDB's
 * memtable and block cache), which saves a thread-pool round trip per read.
 */
export function readRaw(db: Db, sk: string, snapshot?: AbstractSnapshot): string | undefined {
  return snapshot ? db.getSync(sk, { snapshot }) : db.getSync(sk);
}

function toHist(rec: NodeRecord, deleted: boolean): HistRecord {
  const h: HistRecord = {
    k: rec.k as HistRecord["k"],
    v: rec.v ?? null,
    ver: rec.ver,
    mr: rec.mr,
    mt: rec.mt,
  };
  if (deleted) h.d = 1;
  return h;
}

const corrupt = notADirectory;

export type { TreeNode };
