/**
 * The tree's write rules, written once for every storage engine (as abstract-level's `_get`/`_put`
 * hooks): key checks, versions, read-only, create-only and compare-and-set, mkdir -p with exact
 * child counts, dense append sequences, history keeping and trimming, subtree removal, txn
 * judging, the events each write produces and every refusal. A write is planned against a
 * WriteStore — the engine's view of the store for one write: reads of records as that write
 * sees them, staged puts and deletes, its events — and the engine commits what was staged
 * atomically its own way (the LevelDB tree in a group-commit batch, the etcd tree as one etcd
 * transaction guarded by compares on what the plan read).
 *
 * Reads are synchronous: the LevelDB engine answers them from its overlay, caches and LevelDB's
 * memtable; the etcd engine answers what it has fetched and throws `NeedRead` for the rest, then
 * fetches those keys and plans the write again (a plan has no effect outside its WriteStore).
 * Just over 400 lines: the whole rule book in one place is the point of it.
 */
import { depthOf, histKey, histListKey, keyFromNodeKey, nodeKey, subtreeRangeAt } from "./encoding.js";
import { TreeError } from "./errors.js";
import type { HistoryRule } from "./history-limit.js";
import { type ImportItem, importReadOnly, type Restore, restoredEvent, restoredHistory } from "./ndjson.js";
import { MAX_DEPTH, parentOf, parseDirKey, parseKey, parseValueKey } from "./path.js";
import type { HistRecord } from "./record.js";
import { checkValueSize, judgeDel, judgeDeltree, judgeSet, notADirectory, readOnlyBelow } from "./rules.js";
import { checkTransfer, MAX_TRANSFER_KEYS, transferTooLarge } from "./transfer.js";
import { checkTxnSize, compareHolds } from "./txn.js";
import type {
  DelOptions,
  DelResult,
  DeltreeResult,
  SetOptions,
  TransferOptions,
  TransferResult,
  TreeNode,
  TxnCompare,
  TxnOp,
  TxnRequest,
  TxnResult,
  WriteResult,
} from "./types.js";
import { type TreeValue, valueToJson } from "./value.js";
import { type Found, PENDING, type PlanRecord, type WriteStore } from "./write-store.js";

export interface PlanConfig {
  history: HistoryRule;
  maxValueBytes: number;
}

/** Every ancestor directory of `key`, nearest first, down to `/`. */
function ancestors(key: string): string[] {
  const out: string[] = [];
  for (let p = parentOf(key); p !== undefined; p = parentOf(p)) out.push(p);
  return out;
}

/** A write's answer; its revision is PENDING until the engine knows it (fixRevs). */
function result(key: string, version: number): WriteResult {
  return { key, rev: PENDING, version };
}

/** A node's modRev as the tree answers it: a directory's is its creation (child counts moving are not writes to it). */
function modRevOf(f: Found): number {
  return f.rec.k === "index" ? f.cr : f.mr;
}

function toHist(prev: Found, deleted: boolean): HistRecord {
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

export function createPlanner(cfg: PlanConfig) {
  const current = (s: WriteStore, key: string, f: Found | undefined) => () =>
    f ? s.node(key, f) : undefined;

  /** Makes sure directory `dir` exists, creating missing parents (mkdir -p). */
  function ensureDir(s: WriteStore, dir: string): Found {
    const existing = s.readNode(dir);
    if (existing) {
      if (existing.rec.k !== "index") throw notADirectory(dir);
      return existing;
    }
    const rec: PlanRecord = { k: "index", ver: 1, mt: s.now, n: 0, s: 0 };
    const made: Found = { rec, cr: PENDING, mr: PENDING };
    if (dir === "/") {
      s.putNode(dir, rec, PENDING);
      return made;
    }
    const parent = parentOf(dir)!;
    // Kept history below the parent may be for keys below this directory (removed, now made again).
    const p = ensureDir(s, parent);
    if (s.flagsKeptHistory && p.rec.hk === 1) rec.hk = 1;
    s.bump();
    s.putNode(dir, rec, PENDING);
    adjustCount(s, parent, +1, p);
    s.events.push({ t: "put", key: dir, k: "index", ver: 1, p: 0 });
    return made;
  }

  /** Changes the child count of an existing directory (whose current state the caller may hold). */
  function adjustCount(s: WriteStore, dir: string, delta: number, held?: Found): void {
    const f = held ?? s.readNode(dir);
    if (!f) return;
    s.putNode(dir, { ...f.rec, n: Math.max(0, (f.rec.n ?? 0) + delta) }, f.cr);
  }

  /** Marks directory `dir`, if it exists and the engine flags it: a value below it was deleted and its history kept. */
  function markKeptBelow(s: WriteStore, dir: string): void {
    if (!s.flagsKeptHistory) return;
    const f = s.readNode(dir);
    if (f && f.rec.hk !== 1) s.putNode(dir, { ...f.rec, hk: 1 }, f.cr);
  }

  /** Writes a value node (in directory `parent`), keeping the previous version in history. */
  function putValue(
    s: WriteStore,
    key: string,
    rec: PlanRecord,
    prev: Found | undefined,
    parent?: Found,
  ): void {
    const limit = cfg.history.limitFor(key);
    let hist: number[];
    if (prev) {
      hist = prev.rec.h ? [...prev.rec.h] : [];
      // A version written earlier in this same write (a txn setting a key twice) was never
      // visible at any revision: nothing to keep.
      if (limit > 0 && prev.mr !== PENDING) {
        s.put(histKey(key, prev.mr), toHist(prev, false));
        hist.push(prev.mr);
      }
    } else if (s.flagsKeptHistory && parent?.rec.hk !== 1) {
      hist = []; // no deletion below this directory kept history: nothing to pick up
    } else {
      // A key created again after a delete picks up the history its deletion kept.
      const kept = s.readKept(key);
      hist = kept ? [...kept] : [];
      if (kept) s.del(histListKey(key));
    }
    while (hist.length > limit) s.del(histKey(key, hist.shift()!));
    if (hist.length > 0) rec.h = hist;
    else delete rec.h;
    s.putNode(key, rec, prev?.cr ?? PENDING, prev?.mr ?? 0);
  }

  /**
   * Keeps a deleted value's last version in history: as it was, at its own modRev (the delete's
   * revision is the event's), unless this same write wrote it. Answers whether any is kept.
   */
  function keepDeleted(s: WriteStore, key: string, prev: Found): boolean {
    const limit = cfg.history.limitFor(key);
    const hist = prev.rec.h ? [...prev.rec.h] : [];
    if (limit > 0 && prev.mr !== PENDING) {
      s.put(histKey(key, prev.mr), toHist(prev, true));
      hist.push(prev.mr);
    }
    while (hist.length > limit) s.del(histKey(key, hist.shift()!));
    if (hist.length > 0) s.put(histListKey(key), hist);
    return hist.length > 0;
  }

  /**
   * Removes everything below `dir`, and `dir` itself unless it is the root (which stays, empty,
   * and with it all history: as clear); answers how many nodes. Unless forced, a read-only key anywhere below refuses the whole
   * removal. Each removed value keeps its last version in history as `del` keeps it, so a folder
   * can be restored — while the engine can hold that in one write (etcd: a transaction's size);
   * a larger subtree goes without.
   */
  async function removeSubtree(s: WriteStore, dir: string, force: boolean): Promise<number> {
    // The root's removal is clear's (the HTTP API's clear is a forced deltree of /): history goes too.
    const keep = dir !== "/" && cfg.history.keepsBelow(dir);
    const values: Array<{ key: string; prev: Found }> = [];
    let flagged = false;
    let removed = 0;
    for (let depth = depthOf(dir) + 1; depth <= MAX_DEPTH; depth++) {
      const { gte, lt } = subtreeRangeAt(dir, depth);
      const found = await s.scan(gte, lt, force && !keep);
      if (found.length === 0) break;
      for (const e of found) {
        const rec = e.rec;
        if (!rec) continue;
        if (!force && rec.ro === 1) throw readOnlyBelow(keyFromNodeKey(e.sk), dir);
        if (rec.k === "index") flagged ||= rec.hk === 1;
        else if (keep) values.push({ key: keyFromNodeKey(e.sk), prev: { rec, cr: 0, mr: e.mr } });
      }
      s.dropScanned(gte, lt, found);
      removed += found.length;
    }
    if (keep && s.canKeepHistoryOf(values.length)) {
      for (const { key, prev } of values) flagged = keepDeleted(s, key, prev) || flagged;
    } else await s.dropHistoryBelow(dir);
    const self = s.readNode(dir);
    if (self?.rec.hk === 1) flagged = true;
    if (dir === "/") {
      if (self) {
        const { hk: _gone, ...rest } = self.rec; // no history is left
        s.putNode(dir, { ...rest, n: 0 }, self.cr);
      }
      return removed;
    }
    s.del(nodeKey(dir));
    const parent = parentOf(dir)!;
    adjustCount(s, parent, -1);
    if (flagged) markKeptBelow(s, parent);
    return removed + 1;
  }

  function set(s: WriteStore, key: string, value: TreeValue, o: SetOptions = {}): WriteResult {
    parseValueKey(key);
    checkValueSize(value, cfg.maxValueBytes);
    // An overwrite of a value whose record is at hand reads nothing else: the rest (history kept
    // by a delete, the parents) is fetched ahead only when the key may be new.
    const sk = nodeKey(key);
    s.prefetch(() => [sk, histListKey(key), ...ancestors(key).map(nodeKey)], sk);
    const prev = s.readNode(key);
    judgeSet(key, prev?.rec, o, current(s, key, prev));
    const parent = parentOf(key)!;
    // An existing value's directory exists while the value does: an overwrite relies on nothing
    // else (on etcd it then conflicts with no write to another key).
    const dir = prev ? undefined : ensureDir(s, parent);
    s.bump();
    const rec: PlanRecord = {
      k: value.kind,
      v: valueToJson(value),
      ver: (prev?.rec.ver ?? 0) + 1,
      mt: s.now,
    };
    if (o.ro ?? prev?.rec.ro === 1) rec.ro = 1;
    const vid = o.vid ?? (o.disown ? undefined : prev?.rec.vid);
    if (vid !== undefined) rec.vid = vid;
    putValue(s, key, rec, prev, dir);
    if (dir) adjustCount(s, parent, +1, dir);
    s.events.push({ t: "put", key, k: value.kind, v: rec.v, p: prev?.mr ?? 0, ver: rec.ver });
    return result(key, rec.ver);
  }

  function del(s: WriteStore, key: string, o: DelOptions = {}): DelResult {
    const parsed = parseKey(key);
    s.prefetch(() => [nodeKey(key), ...(key === "/" ? [] : [nodeKey(parentOf(key)!)])]);
    const prev = s.readNode(key);
    if (!judgeDel(key, prev?.rec, o, current(s, key, prev)) || !prev)
      return { ...result(key, 0), deleted: false };
    const parent = parentOf(key);
    s.bump();
    let flagged = prev.rec.hk === 1;
    if (!parsed.dir) flagged = keepDeleted(s, key, prev);
    s.del(nodeKey(key));
    adjustCount(s, parent!, -1);
    if (flagged) markKeptBelow(s, parent!);
    s.events.push({ t: "delete", key, k: prev.rec.k, p: modRevOf(prev) });
    return { ...result(key, 0), deleted: true };
  }

  async function deltree(
    s: WriteStore,
    dir: string,
    o: { force?: boolean; ifVersion?: number } = {},
  ): Promise<DeltreeResult> {
    parseDirKey(dir);
    s.prefetch(() => [nodeKey(dir), ...ancestors(dir).slice(0, 1).map(nodeKey)]);
    const prev = s.readNode(dir);
    if (!judgeDeltree(dir, prev?.rec, o, current(s, dir, prev))) return { ...result(dir, 0), removed: 0 };
    s.bump();
    const removed = await removeSubtree(s, dir, o.force === true);
    s.events.push({ t: "deltree", key: dir, k: "index", p: prev && dir !== "/" ? modRevOf(prev) : 0 });
    return { ...result(dir, 0), removed };
  }

  function mkindex(s: WriteStore, dir: string): WriteResult {
    parseDirKey(dir);
    s.prefetch(() => [nodeKey(dir), ...ancestors(dir).map(nodeKey)]);
    return result(dir, ensureDir(s, dir).rec.ver);
  }

  function append(
    s: WriteStore,
    dir: string,
    value: TreeValue,
    o: { vid?: string; ro?: boolean } = {},
  ): WriteResult {
    parseDirKey(dir);
    checkValueSize(value, cfg.maxValueBytes);
    s.prefetch(() => [nodeKey(dir), ...ancestors(dir).map(nodeKey)]);
    ensureDir(s, dir);
    // The directory's sequence says where to start; skip any child set there by other means.
    // (Fresh read: ensureDir may have just created it.)
    let n = s.readNode(dir)?.rec.s ?? 0;
    while (s.readNode(`${dir}${n}`)) n++;
    const key = `${dir}${n}`;
    const res = set(s, key, value, { create: true, ...(o.vid ? { vid: o.vid } : {}), ro: o.ro ?? false });
    const d = s.readNode(dir)!;
    s.putNode(dir, { ...d.rec, s: n + 1 }, d.cr);
    return res;
  }

  /** The nodes of the subtree at `key` (itself first, then depth by depth, in order); a value is itself alone. */
  async function subtree(
    s: WriteStore,
    key: string,
    f: Found,
  ): Promise<Array<{ rel: string; rec: PlanRecord }>> {
    const out = [{ rel: "", rec: f.rec }];
    if (!key.endsWith("/")) return out;
    for (let depth = depthOf(key) + 1; depth <= MAX_DEPTH; depth++) {
      const { gte, lt } = subtreeRangeAt(key, depth);
      const found = await s.scan(gte, lt, false);
      if (found.length === 0) break;
      for (const e of found) if (e.rec) out.push({ rel: keyFromNodeKey(e.sk).slice(key.length), rec: e.rec });
      if (out.length > MAX_TRANSFER_KEYS) throw transferTooLarge(key, out.length);
    }
    return out;
  }

  /**
   * A move (or copy) of `from` to `to` in this one write: the target ends up exactly as the
   * source was — each key written as a set would write it over what the target held (its version
   * goes on from the target's, as an etcd put; a new key starts at 1), target keys the source does
   * not have deleted, and for a move the source removed as del/deltree removes it (its values'
   * last versions kept in history where history is kept). tree/transfer.ts states the rules.
   */
  async function transfer(
    s: WriteStore,
    from: string,
    to: string,
    o: TransferOptions,
    move: boolean,
  ): Promise<TransferResult> {
    checkTransfer(from, to);
    s.prefetch(() => [nodeKey(from), nodeKey(parentOf(from)!), nodeKey(to), ...ancestors(to).map(nodeKey)]);
    const src = s.readNode(from);
    if (!src)
      throw new TreeError("TREE_NOT_FOUND", `${from} does not exist: nothing to ${move ? "move" : "copy"}`, {
        key: from,
      });
    const dst = s.readNode(to);
    if (dst && !o.overwrite)
      throw new TreeError(
        "TREE_EXISTS",
        `${to} already exists; ${move ? "move" : "copy"} with overwrite to replace it, or choose another target`,
        { key: to },
      );
    const nodes = await subtree(s, from, src);
    if (move && !o.force) {
      const ro = nodes.find((n) => n.rec.ro === 1);
      if (ro)
        throw new TreeError(
          "TREE_READ_ONLY",
          `${from + ro.rel} is read-only, so ${from} cannot be moved; force the move, copy it instead, or mark it writable first`,
          { key: from + ro.rel },
        );
    }
    const old = dst ? await subtree(s, to, dst) : [];
    if (!o.force) {
      const ro = old.find((n) => n.rec.ro === 1);
      if (ro)
        throw new TreeError(
          "TREE_READ_ONLY",
          `${to + ro.rel} is read-only, so ${to} cannot be replaced; force it, or mark it writable first`,
          { key: to + ro.rel },
        );
    }
    const landing = new Set(nodes.map((n) => n.rel));
    // What the writes below read, in one go: the target keys they overwrite, and the history a
    // deletion may have kept for the keys they create.
    s.prefetch(() => {
      const had = new Set(old.map((n) => n.rel));
      return [
        ...old.map((n) => nodeKey(to + n.rel)),
        ...nodes.filter((n) => n.rec.k !== "index" && !had.has(n.rel)).map((n) => histListKey(to + n.rel)),
      ];
    });
    s.bump();
    if (move) {
      if (from.endsWith("/")) await deltree(s, from, { force: true });
      else del(s, from, { force: true });
    }
    // Target keys the source does not have go, deepest first (a directory once it is empty).
    for (const n of [...old].reverse())
      if (!landing.has(n.rel)) {
        if (n.rel === "") continue; // never: the target itself always lands
        del(s, to + n.rel, { force: true });
      }
    const parent = parentOf(to)!;
    const top = ensureDir(s, parent);
    if (!dst) adjustCount(s, parent, +1, top);
    const dirs = new Map<string, Found>([["", { ...top }]]);
    const owner = (rec: PlanRecord) => o.vid ?? (o.disown ? undefined : rec.vid);
    for (const n of nodes) {
      const key = to + n.rel;
      const prev = s.readNode(key);
      const above = n.rel === "" ? top : dirs.get(parentOf(key)!.slice(to.length));
      if (n.rec.k === "index") {
        const rec: PlanRecord = prev
          ? { ...prev.rec, n: n.rec.n ?? 0 }
          : { k: "index", ver: 1, mt: s.now, n: n.rec.n ?? 0 };
        if (!prev && s.flagsKeptHistory && above?.rec.hk === 1) rec.hk = 1;
        if (n.rec.s !== undefined) rec.s = n.rec.s;
        else delete rec.s;
        if (n.rec.ro === 1) rec.ro = 1;
        else delete rec.ro;
        s.putNode(key, rec, prev?.cr ?? PENDING);
        dirs.set(n.rel, { rec, cr: prev?.cr ?? PENDING, mr: PENDING });
        if (!prev) s.events.push({ t: "put", key, k: "index", ver: 1, p: 0 });
        continue;
      }
      const rec: PlanRecord = { k: n.rec.k, v: n.rec.v ?? null, ver: (prev?.rec.ver ?? 0) + 1, mt: s.now };
      if (n.rec.ro === 1) rec.ro = 1;
      const vid = owner(n.rec);
      if (vid !== undefined) rec.vid = vid;
      putValue(s, key, rec, prev, above);
      s.events.push({ t: "put", key, k: n.rec.k, v: rec.v, p: prev?.mr ?? 0, ver: rec.ver });
    }
    const landed = s.readNode(to)!;
    return { key: to, rev: PENDING, version: landed.rec.ver, keys: nodes.length };
  }

  function holds(s: WriteStore, c: TxnCompare): boolean {
    parseKey(c.key);
    const f = s.readNode(c.key);
    if (!f) return compareHolds(c, undefined);
    const node = s.node(c.key, f);
    return compareHolds(c, {
      kind: f.rec.k,
      ...(f.rec.v !== undefined ? { value: f.rec.v } : {}),
      version: node.version,
      createRev: node.createRev,
      modRev: node.modRev,
    });
  }

  async function runTxnOp(s: WriteStore, op: TxnOp): Promise<WriteResult | TreeNode | null> {
    switch (op.op) {
      case "set":
        return set(s, op.key, op.value, {
          ...(op.ro !== undefined ? { ro: op.ro } : {}),
          ...(op.force ? { force: true } : {}),
          ...(op.vid !== undefined ? { vid: op.vid } : {}),
          ...(op.disown ? { disown: true } : {}),
        });
      case "del":
        return del(s, op.key, op.force ? { force: true } : {});
      case "deltree":
        return deltree(s, op.key, op.force ? { force: true } : {});
      case "mkindex":
        return mkindex(s, op.key);
      case "append":
        return append(s, op.key, op.value, {
          ...(op.ro !== undefined ? { ro: op.ro } : {}),
          ...(op.vid !== undefined ? { vid: op.vid } : {}),
        });
      case "move":
      case "copy":
        return transfer(s, op.key, op.to, op, op.op === "move");
      case "get": {
        parseKey(op.key);
        const f = s.readNode(op.key);
        return f ? s.node(op.key, f) : null;
      }
      default:
        throw new TreeError(
          "TREE_TXN_INVALID",
          `unknown txn operation ${JSON.stringify((op as { op: unknown }).op)}`,
        );
    }
  }

  async function txn(s: WriteStore, req: TxnRequest): Promise<TxnResult> {
    const compare = req.compare ?? [];
    checkTxnSize(req);
    // Every compared key in one read, ahead of judging them.
    s.prefetch(() =>
      compare.map((c) => (typeof c.key === "string" ? nodeKey(c.key) : "")).filter((k) => k !== ""),
    );
    let ok = true;
    for (const c of compare) if (!holds(s, c)) ok = false;
    const results: TxnResult["results"] = [];
    for (const op of ok ? (req.success ?? []) : (req.failure ?? [])) results.push(await runTxnOp(s, op));
    return { succeeded: ok, rev: PENDING, results };
  }

  /** Empties the store: every node but the root, and all history; the root's count goes to 0. */
  async function clear(s: WriteStore): Promise<WriteResult> {
    s.prefetch(() => [nodeKey("/")]);
    s.bump();
    await s.wipe();
    const root = s.readNode("/");
    if (root) {
      const { hk: _gone, ...rest } = root.rec; // wiped, history included
      s.putNode("/", { ...rest, n: 0 }, root.cr);
    }
    s.events.push({ t: "deltree", key: "/", k: "index", p: 0 });
    return result("/", 0);
  }

  /**
   * Rewrites the value this write just put at `key` as an import line describes it: its version
   * and retained versions (in place of any the key had here).
   */
  function restore(s: WriteStore, key: string, r: Restore): void {
    const f = s.readNode(key)!;
    const rec: PlanRecord = { ...f.rec };
    if (r.version !== undefined) rec.ver = r.version;
    for (const rev of f.rec.h ?? []) s.del(histKey(key, rev));
    const kept = restoredHistory(r.history ?? [], cfg.history.limitFor(key));
    for (const { suffix, rec: h } of kept) s.put(histKey(key, suffix), h);
    if (kept.length > 0) rec.h = kept.map((k) => k.suffix);
    else delete rec.h;
    s.putNode(key, rec, f.cr);
    restoredEvent(s.events, key, rec.ver);
  }

  /** Writes parsed import lines: directories made, values set (read-only ones only with `force`) and restored. */
  function importItems(s: WriteStore, items: ImportItem[], force: boolean): void {
    // Everything the lines may read, fetched in one go.
    s.prefetch(() => {
      const sks = new Set<string>();
      for (const e of items) {
        sks.add(nodeKey(e.key));
        if (!e.dir) sks.add(histListKey(e.key));
        for (const a of ancestors(e.key)) sks.add(nodeKey(a));
      }
      return [...sks];
    });
    for (const e of items) {
      if (e.dir) mkindex(s, e.key);
      else {
        if (!force && s.readNode(e.key)?.rec.ro) throw importReadOnly(e);
        set(s, e.key, e.value, {
          force: true,
          ...(e.ro === undefined ? {} : { ro: e.ro }),
          ...(e.vid ? { vid: e.vid } : e.disown ? { disown: true } : {}),
        });
        if (e.restore) restore(s, e.key, e.restore);
      }
    }
  }

  return { set, del, deltree, mkindex, append, txn, clear, importItems, transfer };
}

export type Planner = ReturnType<typeof createPlanner>;
