/**
 * How the tree is laid out in etcd, under the tree's prefix (`byteseek/` by default). Node keys
 * are those of the LevelDB layout (`tree/encoding.ts`): depth-prefixed, so a directory's direct
 * children are one contiguous key range in natural order, and listing costs what it returns.
 *
 *   <prefix>n<depth><parent><sortName>\0(v|d)  a node: JSON EtcdRecord
 *   <prefix>h<key>\0<rev>                      a retained previous version of a value
 *   <prefix>R<name>                            a hold on an etcd lease (leases.ts: a run's lease)
 *   <prefix>H<key>                             the retained versions of a deleted value
 *
 * Revisions are etcd's: a value's createRev and modRev are its etcd key's create_revision and
 * mod_revision, and every tree write is one etcd transaction, so one etcd revision. A write
 * touches only the keys it changes; the change feed is etcd's watch of the node keys (events.ts).
 *
 * Format 1 (before) also kept a change log in one key, `<prefix>L`, rewritten by every write: a
 * global hot key. A tree in that format is upgraded when it opens (upgrade.ts): the log key goes,
 * and `<prefix>F` marks the revision from which the watch can replay.
 */
import { histKey, histListKey, nodeKey } from "../encoding.js";
import type { EventRecord } from "../record.js";
import type { TreeNode } from "../types.js";
import { valueFromJson } from "../value.js";
import type { PlanRecord } from "../write-store.js";

/**
 * A node as stored in etcd: the rules' record (directories carry no `hk` here) and what the etcd
 * layout adds. Revisions are not in it: they are the etcd key's own.
 */
export interface EtcdRecord extends Omit<PlanRecord, "hk"> {
  /** Values: the modRev of the version this one replaced (0: created), for the watch's prevRev. */
  pr?: number;
  /** The id of the write that put this record, on the first node record a write puts. */
  w?: string;
  /** That write's events, when a watcher cannot rebuild them from its node puts (events.ts). */
  x?: Array<EventRecord & { lz?: 1 }>;
}

/** The change-log key of format 1, removed by the upgrade. */
export const OLD_LOG_SK = "L";
/** Created by the upgrade from format 1: its create_revision is where the watchable history starts. */
export const FORMAT_SK = "F";
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
