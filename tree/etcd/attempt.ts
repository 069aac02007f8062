/**
 * One try of one tree write against etcd (optimistic concurrency).
 *
 * Reads happen at one revision R (the first read picks it; later ones are pinned to it). Writes
 * stay local. The commit is one etcd transaction that applies the writes only if every key whose
 * state the write relied on is as it was read — `mod_revision == mr` for a key that existed,
 * `version == 0` for one that did not — and no range it scanned changed since R. Keys fetched
 * ahead but never looked at (a set of an existing value prefetches its parents) are not
 * compared, so writes to different keys never conflict: an overwrite compares its own node only;
 * a new key, its node and its directory's record (the child count it changes).
 *
 * It is the WriteStore the write rules (plan.ts) plan against. Over 400 lines: the read set, the
 * staged writes and the transaction built from both are one piece of state.
 */
import { HIST, HIST_LIST, NODE, upperBound } from "../encoding.js";
import { compareCodePoints } from "../path.js";
import type { EventRecord, HistRecord } from "../record.js";
import type { TreeNode } from "../types.js";
import {
  type Found,
  NeedRead,
  PENDING,
  type PlanRecord,
  type Scanned,
  type WriteStore,
} from "../write-store.js";
import type { EtcdCalls } from "./calls.js";
import { isCompactedError } from "./client.js";
import { eventsOfPuts, type StagedPut, sameEvents } from "./events.js";
import { type EtcdRecord, histListSk, nodeOf, nodeSk } from "./layout.js";
import { inRange, mergeRanges, type Range, splitRanges } from "./ranges.js";
import type { Compare, KeyValue, RangeResponse, RequestOp } from "./wire.js";

export { PENDING };

/** An entry as this attempt sees it. `cr`/`mr` are PENDING for what it wrote itself. */
export interface Entry {
  raw: string;
  cr: number;
  mr: number;
  /** A node record this attempt staged, as the object `raw` was made from (build reads it back). */
  rec?: EtcdRecord;
}

/** A node as this attempt sees it. */
export interface NodeEntry {
  rec: EtcdRecord;
  cr: number;
  mr: number;
}

/** The attempt found a conflict while reading (a pinned read hit a compaction): start over. */
export class Conflict extends Error {}

const PAGE = 500;
const enc = (s: string) => Buffer.from(s, "utf8");

export class Attempt implements WriteStore {
  /** The revision every read of this attempt is at (0 until the first read). */
  readRev = 0;
  /** Set once the attempt writes anything: it then takes the next revision at commit. */
  writes = false;
  readonly events: EventRecord[] = [];
  readonly now = Date.now();
  /** Directories carry no `hk` here: a new key always reads the history a deletion may have kept. */
  readonly flagsKeptHistory = false;
  readonly #cache = new Map<string, Entry | null>();
  /** Keys whose state this attempt relied on: each becomes a compare. */
  readonly #used = new Set<string>();
  readonly #rangeReads: Range[] = [];
  readonly #local = new Map<string, Entry | null>();
  readonly #delRanges: Range[] = [];

  /** Keys this attempt took from the record cache instead of etcd. */
  readonly fromCache = new Set<string>();

  constructor(
    private readonly rpc: EtcdCalls,
    private readonly prefix: string,
    private readonly onRev: (rev: number) => void,
    /**
     * The records this server last read or wrote (local-reads.ts), taken instead of reading etcd:
     * each one used is compared at commit like any read, so one that is out of date only costs a
     * conflict (and the retry reads etcd).
     */
    private readonly records?: { record(sk: string): Entry | undefined },
    /** etcd's --max-txn-ops: a subtree removal keeps its values' history only while that fits. */
    private readonly maxTxnOps = 128,
  ) {}

  /**
   * Plans a write on this attempt (plan.ts): whenever the plan needs a key not read yet, the
   * keys are fetched (one round trip) and the write planned again from the start.
   */
  async plan<T>(write: (s: WriteStore) => T | Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await write(this);
      } catch (err) {
        if (!(err instanceof NeedRead)) throw err;
        this.#restart();
        await this.fetch(err.sks);
      }
    }
  }

  /** Forgets what a plan staged and relied on; what was read stays (at the same revision). */
  #restart(): void {
    this.#local.clear();
    this.#delRanges.length = 0;
    this.#rangeReads.length = 0;
    this.#used.clear();
    this.events.length = 0;
    this.writes = false;
  }

  /** An entry as this attempt sees it, without waiting: NeedRead when it must come from etcd. */
  #peek(sk: string): Entry | undefined {
    const mine = this.#local.get(sk);
    if (mine !== undefined || this.#local.has(sk)) return mine ?? undefined;
    if (this.#deleted(sk)) return undefined;
    if (!this.#cache.has(sk)) {
      const e = this.records?.record(sk);
      if (!e) throw new NeedRead([sk]);
      this.#cache.set(sk, e);
      this.fromCache.add(sk);
    }
    this.#used.add(sk);
    return this.#cache.get(sk) ?? undefined;
  }

  // ---- the WriteStore the rules (plan.ts) plan against ----

  readNode(key: string): Found | undefined {
    const e = this.#peek(nodeSk(key));
    return e && { rec: JSON.parse(e.raw) as EtcdRecord, cr: e.cr, mr: e.mr };
  }

  readKept(key: string): number[] | undefined {
    const e = this.#peek(histListSk(key));
    return e && (JSON.parse(e.raw) as number[]);
  }

  prefetch(sks: () => string[], unless?: string): void {
    if (unless !== undefined && (this.#local.has(unless) || this.#cache.has(unless) || this.cached(unless)))
      return;
    const want = sks().filter((sk) => !this.#cache.has(sk) && !this.#local.has(sk));
    if (want.length > 0) throw new NeedRead(want);
  }

  putNode(key: string, plan: PlanRecord, cr: number, prevRev?: number): void {
    const rec = plan as EtcdRecord;
    // The watch rebuilds a value's event from its record: it carries the modRev it replaced.
    if (prevRev !== undefined && rec.k !== "index") rec.pr = prevRev;
    this.put(nodeSk(key), rec, { cr });
  }

  async scan(gte: string, lt: string, keysOnly: boolean): Promise<Scanned[]> {
    const out: Scanned[] = [];
    for (const e of await this.scanRaw(gte, lt, keysOnly)) {
      const found: Scanned = { sk: e.sk, mr: e.mr };
      if (e.raw !== undefined) found.rec = JSON.parse(e.raw) as EtcdRecord;
      out.push(found);
    }
    return out;
  }

  dropScanned(gte: string, lt: string): void {
    this.delRange(gte, lt);
  }

  canKeepHistoryOf(values: number): boolean {
    return values * 4 + 16 <= this.maxTxnOps;
  }

  async dropHistoryBelow(dir: string): Promise<void> {
    this.delRange(HIST + dir, HIST + upperBound(dir));
    this.delRange(HIST_LIST + dir, HIST_LIST + upperBound(dir));
  }

  async wipe(): Promise<void> {
    // Everything but the root record: nothing that goes needs reading.
    this.delRange(`${NODE}01`, "o");
    this.delRange(HIST, "i");
    this.delRange(HIST_LIST, "I");
  }

  node(key: string, f: Found): TreeNode {
    return nodeOf(key, f.rec as EtcdRecord, f.cr, f.mr);
  }

  /** Whether the record cache holds `sk` (a write that finds its node there needs nothing else read first). */
  cached(sk: string): boolean {
    return this.records?.record(sk) !== undefined;
  }

  /** What a successful commit wrote: node records put (raw, create revision or PENDING) and deleted. */
  written(): { puts: Array<{ sk: string; raw: string; cr: number }>; dels: string[]; ranges: boolean } {
    const puts: Array<{ sk: string; raw: string; cr: number }> = [];
    const dels: string[] = [];
    for (const [sk, e] of this.#local) {
      if (!sk.startsWith(NODE)) continue;
      if (e === null) dels.push(sk);
      else puts.push({ sk, raw: e.raw, cr: e.cr });
    }
    return { puts, dels, ranges: this.#delRanges.length > 0 };
  }

  bump(): void {
    this.writes = true;
  }

  emit(ev: EventRecord): void {
    this.events.push(ev);
  }

  #deleted(sk: string): boolean {
    return this.#delRanges.some((r) => inRange(sk, r));
  }

  /** Reads these keys from etcd (into the cache) in one round trip. */
  async fetch(sks: string[], fromEtcd = false): Promise<void> {
    let want = [...new Set(sks)].filter((sk) => !this.#cache.has(sk) && !this.#local.has(sk));
    if (!fromEtcd && this.records) {
      const records = this.records;
      want = want.filter((sk) => {
        const e = records.record(sk);
        if (!e) return true;
        this.#cache.set(sk, e);
        this.fromCache.add(sk);
        return false;
      });
    }
    if (want.length === 0) return;
    let kvs: Array<KeyValue | undefined>;
    if (this.readRev === 0) {
      // The first read: one transaction of ranges is one snapshot, and fixes R.
      const res = await this.rpc.txn({
        success: want.map((sk) => ({ request_range: { key: enc(this.prefix + sk) } })),
      });
      this.readRev = res.header.revision;
      this.onRev(this.readRev);
      kvs = res.responses.map((r) => r.response_range?.kvs[0]);
    } else {
      kvs = await Promise.all(
        want.map(async (sk) => {
          try {
            const res = await this.rpc.range({ key: enc(this.prefix + sk), revision: this.readRev });
            return res.kvs[0];
          } catch (err) {
            if (isCompactedError(err)) throw new Conflict("read revision compacted");
            throw err;
          }
        }),
      );
    }
    want.forEach((sk, i) => {
      const kv = kvs[i];
      this.#cache.set(sk, kv ? entryOf(kv) : null);
    });
  }

  /** An entry as this attempt sees it: its own writes, then etcd at R. */
  async get(sk: string): Promise<Entry | undefined> {
    if (this.#local.has(sk)) return this.#local.get(sk) ?? undefined;
    if (this.#deleted(sk)) return undefined;
    if (!this.#cache.has(sk)) await this.fetch([sk]);
    this.#used.add(sk);
    return this.#cache.get(sk) ?? undefined;
  }

  /** Stages a put; `cr` is PENDING for a key this write creates. */
  put(sk: string, value: EtcdRecord | HistRecord | number[], meta: { cr: number } = { cr: PENDING }): void {
    if (!sk.startsWith(NODE)) {
      this.#local.set(sk, { raw: JSON.stringify(value), cr: meta.cr, mr: PENDING });
      return;
    }
    // A record copied from one read carries that write's id and events: they are not this one's.
    const { w: _id, x: _events, ...rec } = value as EtcdRecord;
    this.#local.set(sk, { raw: JSON.stringify(rec), cr: meta.cr, mr: PENDING, rec });
  }

  del(sk: string): void {
    this.#local.set(sk, null);
  }

  /** Deletes every key in [gte, lt) (what this attempt wrote there too). */
  delRange(gte: string, lt: string): void {
    const range = { gte, lt };
    for (const sk of [...this.#local.keys()]) if (inRange(sk, range)) this.#local.delete(sk);
    this.#delRanges.push(range);
  }

  /**
   * Every key in [gte, lt) as this attempt sees it, read from etcd in pages at R (values too
   * unless `keysOnly`). The range joins the read set.
   */
  async scanRaw(
    gte: string,
    lt: string,
    keysOnly: boolean,
  ): Promise<Array<{ sk: string; raw?: string; mr: number }>> {
    if (this.readRev === 0) await this.fetch([gte], true);
    const range = { gte, lt };
    this.#rangeReads.push(range);
    const out = new Map<string, { raw?: string; mr: number }>();
    let from = gte;
    for (;;) {
      let res: RangeResponse;
      try {
        res = await this.rpc.range({
          key: enc(this.prefix + from),
          range_end: enc(this.prefix + lt),
          revision: this.readRev,
          limit: PAGE,
          keys_only: keysOnly,
        });
      } catch (err) {
        if (isCompactedError(err)) throw new Conflict("read revision compacted");
        throw err;
      }
      for (const kv of res.kvs) {
        const sk = kv.key.toString("utf8").slice(this.prefix.length);
        const mr = kv.mod_revision;
        if (!this.#deleted(sk)) out.set(sk, keysOnly ? { mr } : { raw: kv.value.toString("utf8"), mr });
      }
      if (!res.more || res.kvs.length === 0) break;
      from = `${res.kvs[res.kvs.length - 1]!.key.toString("utf8").slice(this.prefix.length)}\0`;
    }
    for (const [sk, e] of this.#local) {
      if (!inRange(sk, range)) continue;
      if (e === null) out.delete(sk);
      else out.set(sk, { raw: e.raw, mr: e.mr });
    }
    return [...out.keys()].sort(compareCodePoints).map((sk) => ({ sk, ...out.get(sk)! }));
  }

  /**
   * The etcd transaction that commits this attempt: compares on everything relied on (merged into
   * at most `maxCompares`), the deletes, then the puts in the order they were first staged. The
   * first node put is the write's marker: it carries the write's id (`w`, so a commit whose answer
   * was lost can be found), and its events (`x`) unless a watcher rebuilds them from the node
   * puts alone (see events.ts). Answers the marker's storage key too.
   */
  build(id: string, maxCompares: number, lazy: (ev: EventRecord) => EventRecord): BuiltTxn {
    const next = this.readRev + 1;
    const compare: Compare[] = [];
    const used = [...this.#used].sort(compareCodePoints);
    const guards: Range[] = [];
    if (used.length + this.#rangeReads.length > maxCompares) {
      // Too many for etcd: nothing read may have changed since R (more conflicts, never fewer).
      for (const sk of used) guards.push({ gte: sk, lt: `${sk}\0` });
    } else
      for (const sk of used) {
        const e = this.#cache.get(sk);
        compare.push(
          e
            ? { key: this.prefix + sk, target: "Mod", result: "Equal", mod_revision: e.mr }
            : { key: this.prefix + sk, target: "Version", result: "Equal", version: 0 },
        );
      }
    guards.push(...this.#rangeReads);
    const merged = guards.length > maxCompares - compare.length ? mergeRanges(guards, maxCompares) : guards;
    for (const g of merged) {
      const c: Compare = {
        key: this.prefix + g.gte,
        target: "Mod",
        result: "Less",
        mod_revision: next,
      };
      if (g.lt !== `${g.gte}\0`) c.range_end = this.prefix + g.lt;
      compare.push(c);
    }
    const success: RequestOp[] = [];
    const localKeys = [...this.#local.keys()];
    for (const r of splitRanges(this.#delRanges, [...localKeys].sort(compareCodePoints)))
      success.push({
        request_delete_range: { key: this.prefix + r.gte, range_end: this.prefix + r.lt },
      });
    const puts: StagedPut[] = [];
    for (const sk of localKeys) {
      const e = this.#local.get(sk);
      if (e === null || e === undefined) success.push({ request_delete_range: { key: this.prefix + sk } });
      else if (sk.startsWith(NODE))
        puts.push({ sk, rec: e.rec ?? (JSON.parse(e.raw) as EtcdRecord), created: e.cr === PENDING });
    }
    const marker = puts[0];
    // The marker's text: its staged text with the write's id (and, when a watcher could not
    // rebuild them, its events) as the last fields, as JSON.stringify of the record with them
    // would write it, without stringifying the record a second time.
    let markerRaw = "";
    if (marker) {
      const staged = this.#local.get(marker.sk)!.raw;
      markerRaw = `${staged.slice(0, -1)}${staged === "{}" ? "" : ","}"w":${JSON.stringify(id)}`;
      if (!sameEvents(this.events, eventsOfPuts(puts)))
        markerRaw += `,"x":${JSON.stringify(this.events.map(lazy))}`;
      markerRaw += "}";
    }
    for (const sk of localKeys) {
      const e = this.#local.get(sk);
      if (e === null || e === undefined) continue;
      const raw = sk === marker?.sk ? markerRaw : e.raw;
      // Keys and values as strings: wire.ts writes their UTF-8 straight into the request.
      success.push({ request_put: { key: this.prefix + sk, value: raw } });
    }
    // A write that scanned or deleted a range, or puts no node (its events have nowhere to go),
    // commits in a transaction of its own; any other names the keys it read and wrote, so group
    // commit can put it beside writes it cannot interfere with.
    const alone = !marker || guards.length > 0 || this.#delRanges.length > 0;
    return {
      compare,
      success,
      marker: marker?.sk ?? "",
      ...(alone ? {} : { touched: { reads: used, writes: localKeys } }),
    };
  }
}

/** An attempt's commit as one etcd transaction. */
export interface BuiltTxn {
  compare: Compare[];
  success: RequestOp[];
  /** The storage key of the write's marker record ("" when it puts no node). */
  marker: string;
  /** The storage keys it compares and writes; absent when it must commit alone. */
  touched?: { reads: string[]; writes: string[] };
}

function entryOf(kv: KeyValue): Entry {
  return { raw: kv.value.toString("utf8"), cr: kv.create_revision, mr: kv.mod_revision };
}
