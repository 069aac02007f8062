/**
 * The single-key writes — set, del, deltree, mkindex, append, clear — each planned against a
 * WriteStore: fetch ahead what it reads, judge it (tree/rules.ts), stage its records, push its
 * events, answer with its revision PENDING.
 */
import { histListKey, nodeKey } from "../encoding.js";
import type { HistoryRule } from "../history-limit.js";
import { parentOf, parseDirKey, parseKey, parseValueKey } from "../path.js";
import { checkValueSize, judgeDel, judgeDeltree, judgeSet } from "../rules.js";
import type { DelOptions, DelResult, DeltreeResult, SetOptions, WriteResult } from "../types.js";
import { type TreeValue, valueToJson } from "../value.js";
import { type Found, PENDING, type PlanRecord, type WriteStore } from "../write-store.js";
import { adjustCount, ancestors, ensureDir, markKeptBelow } from "./dirs.js";
import { keepDeleted, putValue } from "./history.js";
import { removeSubtree } from "./subtree.js";

export interface PlanConfig {
  history: HistoryRule;
  maxValueBytes: number;
}

/** A write's answer; its revision is PENDING until the engine knows it (fixRevs). */
export function result(key: string, version: number): WriteResult {
  return { key, rev: PENDING, version };
}

/** The node at `key` as it is now, for the judges' messages. */
const current = (s: WriteStore, key: string, f: Found | undefined) => () => (f ? s.node(key, f) : undefined);

/** A node's modRev as the tree answers it: a directory's is its creation (child counts moving are not writes to it). */
function modRevOf(f: Found): number {
  return f.rec.k === "index" ? f.cr : f.mr;
}

export function set(
  cfg: PlanConfig,
  s: WriteStore,
  key: string,
  value: TreeValue,
  o: SetOptions = {},
): WriteResult {
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
  putValue(cfg.history, s, key, rec, prev, dir);
  if (dir) adjustCount(s, parent, +1, dir);
  s.events.push({ t: "put", key, k: value.kind, v: rec.v, p: prev?.mr ?? 0, ver: rec.ver });
  return result(key, rec.ver);
}

export function del(cfg: PlanConfig, s: WriteStore, key: string, o: DelOptions = {}): DelResult {
  const parsed = parseKey(key);
  s.prefetch(() => [nodeKey(key), ...(key === "/" ? [] : [nodeKey(parentOf(key)!)])]);
  const prev = s.readNode(key);
  if (!judgeDel(key, prev?.rec, o, current(s, key, prev)) || !prev)
    return { ...result(key, 0), deleted: false };
  const parent = parentOf(key);
  s.bump();
  let flagged = prev.rec.hk === 1;
  if (!parsed.dir) flagged = keepDeleted(cfg.history, s, key, prev);
  s.del(nodeKey(key));
  adjustCount(s, parent!, -1);
  if (flagged) markKeptBelow(s, parent!);
  s.events.push({ t: "delete", key, k: prev.rec.k, p: modRevOf(prev) });
  return { ...result(key, 0), deleted: true };
}

export async function deltree(
  cfg: PlanConfig,
  s: WriteStore,
  dir: string,
  o: { force?: boolean; ifVersion?: number } = {},
): Promise<DeltreeResult> {
  parseDirKey(dir);
  s.prefetch(() => [nodeKey(dir), ...ancestors(dir).slice(0, 1).map(nodeKey)]);
  const prev = s.readNode(dir);
  if (!judgeDeltree(dir, prev?.rec, o, current(s, dir, prev))) return { ...result(dir, 0), removed: 0 };
  s.bump();
  const removed = await removeSubtree(cfg.history, s, dir, o.force === true);
  s.events.push({ t: "deltree", key: dir, k: "index", p: prev && dir !== "/" ? modRevOf(prev) : 0 });
  return { ...result(dir, 0), removed };
}

export function mkindex(s: WriteStore, dir: string): WriteResult {
  parseDirKey(dir);
  s.prefetch(() => [nodeKey(dir), ...ancestors(dir).map(nodeKey)]);
  return result(dir, ensureDir(s, dir).rec.ver);
}

export function append(
  cfg: PlanConfig,
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
  const res = set(cfg, s, key, value, { create: true, ...(o.vid ? { vid: o.vid } : {}), ro: o.ro ?? false });
  const d = s.readNode(dir)!;
  s.putNode(dir, { ...d.rec, s: n + 1 }, d.cr);
  return res;
}

/** Empties the store: every node but the root, and all history; the root's count goes to 0. */
export async function clear(s: WriteStore): Promise<WriteResult> {
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
