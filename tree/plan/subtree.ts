/** Subtrees as a write sees them: read depth by depth, or removed whole (deltree, a move's source). */
import { depthOf, keyFromNodeKey, nodeKey, subtreeRangeAt } from "../encoding.js";
import type { HistoryRule } from "../history-limit.js";
import { MAX_DEPTH, parentOf } from "../path.js";
import { readOnlyBelow } from "../rules.js";
import { MAX_TRANSFER_KEYS, transferTooLarge } from "../transfer.js";
import type { Found, PlanRecord, WriteStore } from "../write-store.js";
import { adjustCount, markKeptBelow } from "./dirs.js";
import { keepDeleted } from "./history.js";

/**
 * Removes everything below `dir`, and `dir` itself unless it is the root (which stays, empty,
 * and with it all history: as clear); answers how many nodes. Unless forced, a read-only key anywhere below refuses the whole
 * removal. Each removed value keeps its last version in history as `del` keeps it, so a folder
 * can be restored — while the engine can hold that in one write (etcd: a transaction's size);
 * a larger subtree goes without.
 */
export async function removeSubtree(
  history: HistoryRule,
  s: WriteStore,
  dir: string,
  force: boolean,
): Promise<number> {
  // The root's removal is clear's (the HTTP API's clear is a forced deltree of /): history goes too.
  const keep = dir !== "/" && history.keepsBelow(dir);
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
    for (const { key, prev } of values) flagged = keepDeleted(history, s, key, prev) || flagged;
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

/** The nodes of the subtree at `key` (itself first, then depth by depth, in order); a value is itself alone. */
export async function readSubtree(
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
