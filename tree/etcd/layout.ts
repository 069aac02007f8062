/**
 * How the tree is laid out in etcd, under the tree's prefix (`byteseek/` by default). Node keys
 * are those of the LevelDB layout (`tree/encoding.ts`): depth-prefixed, so a directory's direct
 * children are one contiguous key range in natural order, and listing costs what it returns.
 *
 *   <prefix>n<depth><parent><sortName>\0(v|d)  a node: JSON EtcdRecord
 *   <prefix>h<key>\0<rev>                      a retained previous version of a value
 *   <prefix>H<key>                             the retained versions of a deleted value
 *   <prefix>L                                  the change log: one JSON LogRecord per revision
 *
 * Revisions are etcd's: a value's createRev and modRev are its etcd key's create_revision and
 * mod_revision, and every tree write is one etcd transaction, so one etcd revision. The change log
 * is a single key rewritten by every write; its MVCC history (etcd watch from a revision) is the
 * tree's change history, compacted with etcd's.
 */
import { histKey, histListKey, nodeKey } from "../encoding.js";
import type { EventRecord } from "../record.js";
import type { TreeNode } from "../types.js";
import { type Json, type NodeKind, valueFromJson } from "../value.js";

/** A node as stored in etcd. Revisions are not in it: they are the etcd key's own. */
export interface EtcdRecord {
  k: NodeKind;
  v?: Json;
  /** Per key, from 1 (directories stay at 1). */
  ver: number;
  mt: number;
  ro?: 1;
  vid?: string;
  /** Directories: number of direct children, and the next append sequence number. */
  n?: number;
  s?: number;
  /** Values: modRevs of retained previous versions, oldest first. */
  h?: number[];
}

/** One revision of the change log. `id` names the write, so an ambiguous commit can be found. */
export interface LogRecord {
  id: string;
  ev: Array<EventRecord & { lz?: 1 }>;
}

export const LOG_SK = "L";
export const nodeSk = nodeKey;
export const histSk = histKey;
export const histListSk = histListKey;

/** The tree node of a record read from etcd (`cr`/`mr`: the etcd key's revisions). */
export function nodeOf(key: string, rec: EtcdRecord, cr: number, mr: number): TreeNode {
  const root = key === "/";
  const dir = rec.k === "index";
  const meta = {
    key,
    version: rec.ver,
    createRev: root ? 0 : cr,
    // A directory's modRev is its creation: child counts moving are not writes to it.
    modRev: root ? 0 : dir ? cr : mr,
    mtime: rec.mt,
    ro: rec.ro === 1,
    ...(rec.vid === undefined ? {} : { vid: rec.vid }),
  };
  if (rec.k === "index") return { ...meta, kind: "index", count: rec.n ?? 0 };
  return { ...meta, kind: rec.k, value: valueFromJson(rec.k, rec.v) };
}
