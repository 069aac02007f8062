/**
 * The tree's write operations, run inside an Attempt: the same rules as the LevelDB tree
 * (`tree/level-tree.ts`, `tree/mutation.ts`) — mkdir -p with exact child counts, versions from 1,
 * retained history, dense append — expressed as reads at one revision and local writes that
 * commit as one etcd transaction.
 */
import { depthOf, keyFromNodeKey, subtreeRangeAt, upperBound } from "../encoding.js";
import { TreeError } from "../errors.js";
import type { HistoryRule } from "../history-limit.js";
import { type Restore, restoredEvent, restoredHistory } from "../ndjson.js";
import { MAX_DEPTH, parentOf, parseDirKey, parseKey, parseValueKey } from "../path.js";
import type { HistRecord } from "../record.js";
import { checkValueSize, judgeDel, judgeDeltree, judgeSet, notADirectory, readOnlyBelow } from "../rules.js";
import { checkTxnSize, compareHolds } from "../txn.js";
import type {
  DelOptions,
  DelResult,
  DeltreeResult,
  SetOptions,
  TreeNode,
  TxnCompare,
  TxnOp,
  TxnRequest,
  TxnResult,
  WriteResult,
} from "../types.js";
import { type TreeValue, valueToJson } from "../value.js";
import { type Attempt, type NodeEntry, PENDING } from "./attempt.js";
import { type EtcdRecord, histListSk, histSk, nodeOf, nodeSk } from "./layout.js";

export interface OpsConfig {
  history: HistoryRule;
  maxValueBytes: number;
  /** etcd's --max-txn-ops: a deltree keeps its values' history only while that fits. */
  maxTxnOps: number;
}

export const checkSize = checkValueSize;

/** Every ancestor directory of `key`, nearest first, down to `/`. */
function ancestors(key: string): string[] {
  const out: string[] = [];
  for (let p = parentOf(key); p !== undefined; p = parentOf(p)) out.push(p);
  return out;
}

/** A write's answer; its revision (the commit's, or the one read at when nothing was written) is filled in by the caller. */
function result(key: string, version: number): WriteResult {
  return { key, rev: PENDING, version };
}

/** The node an entry is, for the details of a version mismatch. */
const current = (key: string, e: NodeEntry | undefined) => () =>
  e ? nodeOf(key, e.rec, e.cr, e.mr) : undefined;

export function createOps(cfg: OpsConfig) {
  async function ensureDir(m: Attempt, dir: string): Promise<NodeEntry> {
    const existing = await m.readNode(dir);
    if (existing) {
      if (existing.rec.k !== "index") throw notADirectory(dir);
      return existing;
    }
    const rec: EtcdRecord = { k: "index", ver: 1, mt: m.now, n: 0, s: 0 };
    if (dir === "/") {
      m.put(nodeSk(dir), rec);
      return { rec, cr: PENDING, mr: PENDING };
    }
    const parent = parentOf(dir)!;
    await ensureDir(m, parent);
    m.bump();
    m.put(nodeSk(dir), rec);
    await adjustCount(m, parent, +1);
    m.emit({ t: "put", key: dir, k: "index", ver: 1, p: 0 });
    return { rec, cr: PENDING, mr: PENDING };
  }

  async function adjustCount(m: Attempt, dir: string, delta: number): Promise<void> {
    const e = await m.readNode(dir);
    if (!e) return;
    m.put(nodeSk(dir), { ...e.rec, n: Math.max(0, (e.rec.n ?? 0) + delta) }, { cr: e.cr });
  }

  function toHist(prev: NodeEntry, deleted: boolean): HistRecord {
    const h: HistRecord = {
      k: prev.rec.k as HistRecord["k"],
      v: prev.rec.v ?? null,
      ver: prev.rec.ver,
      mr: prev.mr,
      mt: prev.rec.mt,
    };
    if (deleted) h.d = 1;
    return h;
  }

  async function putValue(
    m: Attempt,
    key: string,
    rec: EtcdRecord,
    prev: NodeEntry | undefined,
  ): Promise<void> {
    const limit = cfg.history.limitFor(key);
    let hist: number[];
    if (prev) {
      hist = [...(prev.rec.h ?? [])];
      // A version written earlier in this same transaction was never visible: nothing to keep.
      if (limit > 0 && prev.mr !== PENDING) {
        m.put(histSk(key, prev.mr), toHist(prev, false));
        hist.push(prev.mr);
      }
    } else {
      // A key created again after a delete picks up the history its deletion kept.
      const kept = await m.get(histListSk(key));
      hist = kept ? (JSON.parse(kept.raw) as number[]) : [];
      if (kept) m.del(histListSk(key));
    }
    while (hist.length > limit) m.del(histSk(key, hist.shift()!));
    if (hist.length > 0) rec.h = hist;
    else delete rec.h;
    m.put(nodeSk(key), rec, { cr: prev?.cr ?? PENDING });
  }

  function deleteValue(m: Attempt, key: string, prev: NodeEntry): void {
    const limit = cfg.history.limitFor(key);
    const hist = [...(prev.rec.h ?? [])];
    if (limit > 0 && prev.mr !== PENDING) {
      // Keyed by the revision that wrote the value (the delete's own is not known before commit).
      m.put(histSk(key, prev.mr), toHist(prev, true));
      hist.push(prev.mr);
    }
    while (hist.length > limit) m.del(histSk(key, hist.shift()!));
    if (hist.length > 0) m.put(histListSk(key), hist);
    m.del(nodeSk(key));
  }

  /**
   * Removes everything below `dir` (and `dir` itself unless it is the root); answers how many
   * nodes. Each depth goes in one range delete. The last value of every removed key is kept in
   * history as a delete would keep it, as long as that fits one etcd transaction (about a quarter
   * of --max-txn-ops values); a larger subtree goes without its history.
   */
  async function removeSubtree(m: Attempt, dir: string, force: boolean): Promise<number> {
    const keep = cfg.history.keepsBelow(dir);
    const values: Array<{ key: string; prev: NodeEntry }> = [];
    let removed = 0;
    for (let depth = depthOf(dir) + 1; depth <= MAX_DEPTH; depth++) {
      const { gte, lt } = subtreeRangeAt(dir, depth);
      const entries = await m.scan(gte, lt, force && !keep);
      if (entries.length === 0) break;
      for (const e of entries) {
        if (e.raw === undefined) continue;
        const rec = JSON.parse(e.raw) as EtcdRecord;
        if (!force && rec.ro === 1) throw readOnlyBelow(keyFromNodeKey(e.sk), dir);
        if (keep && rec.k !== "index")
          values.push({ key: keyFromNodeKey(e.sk), prev: { rec, cr: 0, mr: e.mr } });
      }
      m.delRange(gte, lt);
      removed += entries.length;
    }
    if (keep && values.length * 4 + 16 <= cfg.maxTxnOps) {
      for (const { key, prev } of values) deleteValue(m, key, prev);
    } else {
      m.delRange(`h${dir}`, `h${upperBound(dir)}`);
      m.delRange(`H${dir}`, `H${upperBound(dir)}`);
    }
    if (dir === "/") {
      const root = await m.readNode("/");
      if (root) m.put(nodeSk("/"), { ...root.rec, n: 0 }, { cr: root.cr });
    } else {
      m.del(nodeSk(dir));
      removed++;
      await adjustCount(m, parentOf(dir)!, -1);
    }
    return removed;
  }

  async function set(m: Attempt, key: string, value: TreeValue, o: SetOptions = {}): Promise<WriteResult> {
    parseValueKey(key);
    checkSize(value, cfg.maxValueBytes);
    // An overwrite of a value this server has the record of reads nothing else: prefetch the
    // rest (history kept by a delete, the parents) only when the key may be new.
    if (!m.cached(nodeSk(key))) await m.fetch([nodeSk(key), histListSk(key), ...ancestors(key).map(nodeSk)]);
    const prev = await m.readNode(key);
    judgeSet(key, prev?.rec, o, current(key, prev));
    // An existing value's directory exists while the value does (its compare says so): an
    // overwrite relies on nothing else, so it conflicts with no write to another key.
    if (!prev) await ensureDir(m, parentOf(key)!);
    m.bump();
    const rec: EtcdRecord = {
      k: value.kind,
      v: valueToJson(value),
      ver: (prev?.rec.ver ?? 0) + 1,
      mt: m.now,
      pr: prev?.mr ?? 0,
    };
    if (o.ro ?? prev?.rec.ro === 1) rec.ro = 1;
    const vid = o.vid ?? prev?.rec.vid;
    if (vid !== undefined) rec.vid = vid;
    await putValue(m, key, rec, prev);
    if (!prev) await adjustCount(m, parentOf(key)!, +1);
    m.emit({ t: "put", key, k: value.kind, v: valueToJson(value), p: prev?.mr ?? 0, ver: rec.ver });
    return result(key, rec.ver);
  }

  async function del(m: Attempt, key: string, o: DelOptions = {}): Promise<DelResult> {
    const parsed = parseKey(key);
    await m.fetch([nodeSk(key), ...(parentOf(key) ? [nodeSk(parentOf(key)!)] : [])]);
    const prev = await m.readNode(key);
    if (!judgeDel(key, prev?.rec, o, current(key, prev)) || !prev)
      return { ...result(key, 0), deleted: false };
    if (parsed.dir) {
      m.bump();
      m.del(nodeSk(key));
    } else {
      m.bump();
      deleteValue(m, key, prev);
    }
    await adjustCount(m, parentOf(key)!, -1);
    m.emit({ t: "delete", key, k: prev.rec.k, p: prev.mr });
    return { ...result(key, 0), deleted: true };
  }

  async function deltree(
    m: Attempt,
    dir: string,
    o: { force?: boolean; ifVersion?: number } = {},
  ): Promise<DeltreeResult> {
    parseDirKey(dir);
    await m.fetch([nodeSk(dir), ...ancestors(dir).slice(0, 1).map(nodeSk)]);
    const prev = await m.readNode(dir);
    if (!judgeDeltree(dir, prev?.rec, o, current(dir, prev))) return { ...result(dir, 0), removed: 0 };
    m.bump();
    const removed = await removeSubtree(m, dir, o.force === true);
    m.emit({ t: "deltree", key: dir, k: "index", p: prev && dir !== "/" ? prev.cr : 0 });
    return { ...result(dir, 0), removed };
  }

  async function mkindex(m: Attempt, dir: string): Promise<WriteResult> {
    parseDirKey(dir);
    await m.fetch([nodeSk(dir), ...ancestors(dir).map(nodeSk)]);
    const e = await ensureDir(m, dir);
    return result(dir, e.rec.ver);
  }

  async function append(
    m: Attempt,
    dir: string,
    value: TreeValue,
    o: { vid?: string; ro?: boolean } = {},
  ): Promise<WriteResult> {
    parseDirKey(dir);
    checkSize(value, cfg.maxValueBytes);
    await m.fetch([nodeSk(dir), ...ancestors(dir).map(nodeSk)]);
    await ensureDir(m, dir);
    // The directory's sequence says where to start; skip any child set there by other means.
    let n = (await m.readNode(dir))?.rec.s ?? 0;
    while (await m.readNode(`${dir}${n}`)) n++;
    const key = `${dir}${n}`;
    const res = await set(m, key, value, {
      create: true,
      ...(o.vid ? { vid: o.vid } : {}),
      ro: o.ro ?? false,
    });
    const d = (await m.readNode(dir))!;
    m.put(nodeSk(dir), { ...d.rec, s: n + 1 }, { cr: d.cr });
    return res;
  }

  /**
   * Rewrites the value this write just put at `key` as an import line describes it: its version
   * and retained versions (in place of any the key had here).
   */
  async function restore(m: Attempt, key: string, r: Restore): Promise<void> {
    const e = (await m.readNode(key))!;
    const rec: EtcdRecord = { ...e.rec };
    if (r.version !== undefined) rec.ver = r.version;
    for (const s of e.rec.h ?? []) m.del(histSk(key, s));
    const kept = restoredHistory(r.history ?? [], cfg.history.limitFor(key));
    for (const { suffix, rec: h } of kept) m.put(histSk(key, suffix), h);
    if (kept.length > 0) rec.h = kept.map((k) => k.suffix);
    else delete rec.h;
    m.put(nodeSk(key), rec, { cr: e.cr });
    restoredEvent(m.events, key, rec.ver);
  }

  async function holds(m: Attempt, c: TxnCompare): Promise<boolean> {
    parseKey(c.key);
    const e = await m.readNode(c.key);
    if (!e) return compareHolds(c, undefined);
    const node = nodeOf(c.key, e.rec, e.cr, e.mr);
    return compareHolds(c, {
      kind: e.rec.k,
      ...(e.rec.v !== undefined ? { value: e.rec.v } : {}),
      version: node.version,
      createRev: node.createRev,
      modRev: node.modRev,
    });
  }

  async function runTxnOp(m: Attempt, op: TxnOp): Promise<WriteResult | TreeNode | null> {
    switch (op.op) {
      case "set":
        return set(m, op.key, op.value, {
          ...(op.ro !== undefined ? { ro: op.ro } : {}),
          ...(op.force ? { force: true } : {}),
          ...(op.vid !== undefined ? { vid: op.vid } : {}),
        });
      case "del":
        return del(m, op.key, op.force ? { force: true } : {});
      case "deltree":
        return deltree(m, op.key, op.force ? { force: true } : {});
      case "mkindex":
        return mkindex(m, op.key);
      case "get": {
        parseKey(op.key);
        const e = await m.readNode(op.key);
        return e ? nodeOf(op.key, e.rec, e.cr, e.mr) : null;
      }
      default:
        throw new TreeError(
          "TREE_TXN_INVALID",
          `unknown txn operation ${JSON.stringify((op as { op: unknown }).op)}`,
        );
    }
  }

  async function txn(m: Attempt, req: TxnRequest): Promise<TxnResult> {
    const compare = req.compare ?? [];
    const success = req.success ?? [];
    const failure = req.failure ?? [];
    checkTxnSize(req);
    let ok = true;
    for (const c of compare) if (!(await holds(m, c))) ok = false;
    const results: TxnResult["results"] = [];
    for (const op of ok ? success : failure) results.push(await runTxnOp(m, op));
    return { succeeded: ok, rev: PENDING, results };
  }

  async function clear(m: Attempt): Promise<WriteResult> {
    await m.fetch([nodeSk("/")]);
    m.bump();
    // Everything but the root record, whose count goes to 0: no need to read what goes.
    m.delRange("n01", "o");
    m.delRange("h", "i");
    m.delRange("H", "I");
    const root = await m.readNode("/");
    if (root) m.put(nodeSk("/"), { ...root.rec, n: 0 }, { cr: root.cr });
    m.emit({ t: "deltree", key: "/", k: "index", p: 0 });
    return result("/", 0);
  }

  return { set, del, deltree, mkindex, append, txn, clear, restore };
}
