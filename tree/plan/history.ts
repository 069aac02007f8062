/** A value's retained versions: kept when it is overwritten or deleted, trimmed to the limit, restored by an import. */
import { histKey, histListKey } from "../encoding.js";
import type { HistoryRule } from "../history-limit.js";
import { type Restore, restoredEvent, restoredHistory } from "../ndjson.js";
import type { HistRecord } from "../record.js";
import { type Found, PENDING, type PlanRecord, type WriteStore } from "../write-store.js";

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

/** Writes a value node (in directory `parent`), keeping the previous version in history. */
export function putValue(
  history: HistoryRule,
  s: WriteStore,
  key: string,
  rec: PlanRecord,
  prev: Found | undefined,
  parent?: Found,
): void {
  const limit = history.limitFor(key);
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
export function keepDeleted(history: HistoryRule, s: WriteStore, key: string, prev: Found): boolean {
  const limit = history.limitFor(key);
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
 * Rewrites the value this write just put at `key` as an import line describes it: its version
 * and retained versions (in place of any the key had here).
 */
export function restore(history: HistoryRule, s: WriteStore, key: string, r: Restore): void {
  const f = s.readNode(key)!;
  const rec: PlanRecord = { ...f.rec };
  if (r.version !== undefined) rec.ver = r.version;
  for (const rev of f.rec.h ?? []) s.del(histKey(key, rev));
  const kept = restoredHistory(r.history ?? [], history.limitFor(key));
  for (const { suffix, rec: h } of kept) s.put(histKey(key, suffix), h);
  if (kept.length > 0) rec.h = kept.map((k) => k.suffix);
  else delete rec.h;
  s.putNode(key, rec, f.cr);
  restoredEvent(s.events, key, rec.ver);
}
