import type { HistoryEntry, TreeNode, WatchEvent } from "./types.js";
import {
  type Json,
  type NodeKind,
  type TreeValue,
  type ValueKind,
  valueFromJson,
  valueToJson,
} from "./value.js";

/** A node record as the rules see it; each engine's record has these fields and may have more. */
export interface PlanRecord {
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
  /** Directories (engines that flag it): a value below was deleted with its history kept. */
  hk?: 1;
}

/**
 * A node as stored: short field names, the value in its JSON form; the fields the write rules read
 * (PlanRecord), and the revisions that created and last wrote it.
 */
export interface NodeRecord extends PlanRecord {
  cr: number;
  mr: number;
  /** The root: the store's layout version (STORE_FORMAT); absent before directories carried `hk`. */
  fmt?: number;
}

/** The layout version written in the root record. 2: directories carry `hk`. */
export const STORE_FORMAT = 2;

/** A retained previous version as stored. */
export interface HistRecord {
  k: ValueKind;
  v: Json;
  ver: number;
  mr: number;
  mt: number;
  d?: 1;
}

/** A change as stored in the log. */
export interface EventRecord {
  t: WatchEvent["type"];
  key: string;
  k?: NodeKind;
  v?: Json;
  p: number;
  ver?: number;
}

export function nodeFromRecord(key: string, r: NodeRecord): TreeNode {
  // Built field by field, no spreads: every GET and listed child comes through here.
  const node: Record<string, unknown> = {
    key,
    version: r.ver,
    createRev: r.cr,
    modRev: r.mr,
    mtime: r.mt,
    ro: r.ro === 1,
    kind: r.k,
  };
  if (r.k === "index") node.count = r.n ?? 0;
  else node.value = fromStored(r.k, r.v);
  if (r.vid !== undefined) node.vid = r.vid;
  return node as unknown as TreeNode; // the fields TreeNode declares for kind r.k, set just above
}

/** Decodes a stored value; json was checked when it was written, so it is not walked again. */
function fromStored(kind: ValueKind, v: Json | undefined): TreeValue {
  return kind === "json" ? { kind, value: v ?? null } : valueFromJson(kind, v);
}

export function storedValue(value: TreeValue): Json {
  return valueToJson(value);
}

export function histFromRecord(key: string, raw: string): HistoryEntry {
  const r = JSON.parse(raw) as HistRecord;
  const entry: HistoryEntry = {
    key,
    kind: r.k,
    value: fromStored(r.k, r.v),
    version: r.ver,
    modRev: r.mr,
    mtime: r.mt,
  };
  if (r.d === 1) entry.deleted = true;
  return entry;
}

export function eventFromRecord(rev: number, r: EventRecord): WatchEvent {
  const ev: WatchEvent = { type: r.t, key: r.key, rev, prevRev: r.p };
  if (r.k !== undefined) ev.kind = r.k;
  if (r.k !== undefined && r.k !== "index" && r.v !== undefined) ev.value = fromStored(r.k, r.v);
  if (r.ver !== undefined) ev.version = r.ver;
  return ev;
}
