/**
 * The LevelDB tree's reads: a node (through the node cache), a directory's children in pages, a
 * value's retained versions; each at the store's latest state or at a snapshot (export).
 */
import type { AbstractSnapshot } from "abstract-level";
import { childNodeKey, childrenRange, histKey, histListKey, keyFromNodeKey, nodeKey } from "./encoding.js";
import { TreeError } from "./errors.js";
import { type Db, readRaw } from "./mutation.js";
import type { NodeCache } from "./node-cache.js";
import { isSystemName, nameOf, parseDirKey, parseKey, parseValueKey } from "./path.js";
import { histFromRecord, type NodeRecord, nodeFromRecord } from "./record.js";
import { emptyRoot, listLimit } from "./rules.js";
import type { HistoryEntry, ListChild, ListOptions, ListResult, TreeNode } from "./types.js";

export interface LevelReadsDeps {
  db: Db;
  cache: NodeCache;
  /** Throws TREE_CLOSED once the tree is closed. */
  checkOpen(): void;
}

export function createLevelReads({ db, cache, checkOpen }: LevelReadsDeps) {
  async function getNode(key: string, snapshot?: AbstractSnapshot): Promise<TreeNode | undefined> {
    checkOpen();
    parseKey(key);
    if (!snapshot) {
      const hit = cache.get(key);
      if (hit) return hit;
    }
    const raw = readRaw(db, nodeKey(key), snapshot);
    if (raw === undefined) {
      return key === "/" ? emptyRoot() : undefined;
    }
    const node = nodeFromRecord(key, JSON.parse(raw) as NodeRecord);
    return snapshot ? node : cache.remember(key, node, raw.length);
  }

  async function list(dir: string, o: ListOptions = {}, snapshot?: AbstractSnapshot): Promise<ListResult> {
    checkOpen();
    parseDirKey(dir);
    const limit = listLimit(o);
    if (dir !== "/" && readRaw(db, nodeKey(dir), snapshot) === undefined)
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

  async function history(key: string, snapshot?: AbstractSnapshot): Promise<HistoryEntry[]> {
    checkOpen();
    parseValueKey(key);
    const raw = readRaw(db, nodeKey(key), snapshot);
    let revs: number[] = [];
    if (raw !== undefined) revs = (JSON.parse(raw) as NodeRecord).h ?? [];
    else {
      const kept = readRaw(db, histListKey(key), snapshot);
      if (kept !== undefined) revs = JSON.parse(kept) as number[];
    }
    const values = await db.getMany(
      revs.map((r) => histKey(key, r)),
      snapshot ? { snapshot } : {},
    );
    const out: HistoryEntry[] = [];
    for (const v of values) if (v !== undefined) out.push(histFromRecord(key, v));
    return out.reverse();
  }

  return { getNode, list, history };
}
