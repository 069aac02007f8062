/**
 * One write operation's view of the store while it runs inside a commit group: reads see the
 * committed store, then what the group (earlier operations and this one) wrote. Writes go into
 * the group's overlay at once, and each remembers what it replaced, so a failed operation is
 * undone and leaves no trace (all or nothing per operation, and per transaction).
 */
import type { AbstractLevel, AbstractSnapshot } from "abstract-level";
import { HIST, HIST_LIST, histListKey, NODE, nodeKey, upperBound } from "./encoding.js";
import type { HistoryRule } from "./history-limit.js";
import {
  type EventRecord,
  type HistRecord,
  type NodeRecord,
  nodeFromRecord,
  STORE_FORMAT,
} from "./record.js";
import { SizedCache } from "./sized-cache.js";
import type { TreeNode } from "./types.js";
import { type Found, PENDING, type PlanRecord, type Scanned, type WriteStore } from "./write-store.js";

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

export class Mutation implements WriteStore {
  /** Each write of this operation: the key, and what the overlay held before it. */
  readonly #undo: Array<[string, Stored | typeof ABSENT]> = [];
  readonly events: EventRecord[] = [];
  readonly flagsKeptHistory = true;
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
  bump(): void {
    if (this.rev === 0) this.rev = this.allocRev();
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

  // ---- the WriteStore the rules (plan.ts) plan against ----

  get now(): number {
    return this.options.now;
  }

  readNode(key: string): Found | undefined {
    const rec = this.read<NodeRecord>(nodeKey(key));
    return rec && { rec, cr: rec.cr, mr: this.mine(rec.mr) };
  }

  /** PENDING for a revision this operation wrote (the rules keep no version nobody saw). */
  private mine(mr: number): number {
    return this.rev !== 0 && mr === this.rev ? PENDING : mr;
  }

  readKept(key: string): number[] | undefined {
    return this.read<number[]>(histListKey(key));
  }

  prefetch(): void {} // every read is local

  putNode(key: string, plan: PlanRecord, cr: number): void {
    const rec = plan as NodeRecord; // the plan's own record: its revisions are filled in here
    if (key === "/") {
      rec.cr = 0;
      rec.mr = 0;
      rec.fmt = STORE_FORMAT;
    } else {
      rec.cr = cr === PENDING ? this.rev : cr;
      // A directory's modRev is its creation: child counts moving are not writes to it.
      rec.mr = rec.k === "index" ? rec.cr : this.rev;
    }
    this.write(nodeKey(key), rec);
  }

  put(sk: string, value: HistRecord | number[]): void {
    this.write(sk, value);
  }

  del(sk: string): void {
    this.write(sk, null);
  }

  async scan(gte: string, lt: string): Promise<Scanned[]> {
    const out: Scanned[] = [];
    for (const sk of await this.rangeKeys(gte, lt)) {
      const rec = this.read<NodeRecord>(sk)!;
      out.push({ sk, rec, mr: this.mine(rec.mr) });
    }
    return out;
  }

  dropScanned(_gte: string, _lt: string, found: Scanned[]): void {
    for (const { sk } of found) this.write(sk, null);
  }

  canKeepHistoryOf(): boolean {
    return true;
  }

  async dropHistoryBelow(dir: string): Promise<void> {
    for (const p of [HIST, HIST_LIST])
      for (const sk of await this.rangeKeys(p + dir, p + upperBound(dir))) this.write(sk, null);
  }

  async wipe(): Promise<void> {
    for (const [gte, lt] of [
      [`${NODE}01`, String.fromCharCode(NODE.charCodeAt(0) + 1)],
      [HIST, String.fromCharCode(HIST.charCodeAt(0) + 1)],
      [HIST_LIST, String.fromCharCode(HIST_LIST.charCodeAt(0) + 1)],
    ] as const)
      for (const sk of await this.rangeKeys(gte, lt)) this.write(sk, null);
  }

  node(key: string, f: Found): TreeNode {
    return nodeFromRecord(key, f.rec as NodeRecord);
  }
}

/**
 * Reads one stored entry. Both embedded backends answer point reads synchronously (from LevelDB's
 * memtable and block cache), which saves a thread-pool round trip per read.
 */
export function readRaw(db: Db, sk: string, snapshot?: AbstractSnapshot): string | undefined {
  return snapshot ? db.getSync(sk, { snapshot }) : db.getSync(sk);
}

export type { TreeNode };
