/**
 * What the write rules (plan.ts) need of a storage engine for one write — the engine's side of
 * the contract, as abstract-level's `_get`/`_put` hooks: read a node or a kept-history list as the
 * write sees it, stage puts and deletes, scan and drop a subtree, and collect the write's events.
 * The engine then commits what was staged atomically its own way and fills in the revision
 * (fixRevs).
 */
import type { EventRecord, HistRecord, PlanRecord } from "./record.js";
import type { TreeNode } from "./types.js";

/** A revision not known while planning: the one the write commits at. */
export const PENDING = -1;

export type { PlanRecord } from "./record.js";

/** A node as a write sees it: its record, the revisions that created and last wrote it (PENDING: this write). */
export interface Found {
  rec: PlanRecord;
  cr: number;
  mr: number;
}

/** A node met by a subtree scan; `rec` is absent when the scan asked for keys only. */
export interface Scanned {
  sk: string;
  rec?: PlanRecord;
  mr: number;
}

/** The etcd engine needs these keys fetched before the write can be planned (again). */
export class NeedRead extends Error {
  constructor(readonly sks: string[]) {
    super("a read is needed before planning");
  }
}

/** One write's view of the store. Records handed to it are the write's own: the engine may add fields. */
export interface WriteStore {
  /** The clock reading of this write (its mtime). */
  readonly now: number;
  /** The write's events, in order. */
  readonly events: EventRecord[];
  /** Whether directories carry `hk`, so a new key reads the history a deletion kept only when flagged. */
  readonly flagsKeptHistory: boolean;
  /** A node as this write sees it: the store, then what the write staged. */
  readNode(key: string): Found | undefined;
  /** The retained versions a deletion of `key` kept (`H<key>`). */
  readKept(key: string): number[] | undefined;
  /**
   * The write will likely read these storage keys: an engine that reads remotely fetches them
   * together now, unless it holds `unless` already. (A function: the embedded engine never asks.)
   */
  prefetch(sks: () => string[], unless?: string): void;
  /** The write changes something: it takes a revision. */
  bump(): void;
  /** Stages a node record; `cr` is PENDING for a key this write creates, `prevRev` the replaced value's modRev. */
  putNode(key: string, rec: PlanRecord, cr: number, prevRev?: number): void;
  /** Stages a history record or list. */
  put(sk: string, value: HistRecord | number[]): void;
  del(sk: string): void;
  /** The nodes in [gte, lt) as this write sees them, sorted; records unless `keysOnly` (an engine may send them anyway). */
  scan(gte: string, lt: string, keysOnly: boolean): Promise<Scanned[]>;
  /** Deletes the nodes a scan of [gte, lt) found. */
  dropScanned(gte: string, lt: string, found: Scanned[]): void;
  /** Whether one write may keep the history of this many removed values (etcd: a transaction's size). */
  canKeepHistoryOf(values: number): boolean;
  /** Deletes every history record and list at or below `dir`. */
  dropHistoryBelow(dir: string): Promise<void>;
  /** Deletes every node but the root, and all history (clear). */
  wipe(): Promise<void>;
  /** The tree node `f` is. */
  node(key: string, f: Found): TreeNode;
}

/** Replaces the PENDING revisions of what a write answers with the revision it committed at. */
export function fixRevs<T>(value: T, rev: number): T {
  fixRev(value, rev);
  const results = (value as { results?: unknown[] } | null)?.results;
  if (Array.isArray(results)) for (const r of results) fixRev(r, rev);
  return value;
}

function fixRev(o: unknown, rev: number): void {
  if (o === null || typeof o !== "object") return;
  const r = o as Record<string, unknown>;
  if (r.rev === PENDING) r.rev = rev;
  if (r.createRev === PENDING) r.createRev = rev;
  if (r.modRev === PENDING) r.modRev = rev;
}
