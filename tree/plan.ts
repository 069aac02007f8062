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
 *
 * The rule book, in `plan/`: the single-key writes (ops.ts: set, del, deltree, mkindex, append,
 * clear) over directories (dirs.ts), retained versions (history.ts) and subtrees (subtree.ts);
 * move and copy (transfer.ts), txn (txn.ts) and import (import.ts) are made of those.
 */
import type { ImportItem } from "./ndjson.js";
import { importItems } from "./plan/import.js";
import { append, clear, del, deltree, mkindex, type PlanConfig, set } from "./plan/ops.js";
import { transfer } from "./plan/transfer.js";
import { txn } from "./plan/txn.js";
import type {
  DelOptions,
  DelResult,
  DeltreeResult,
  SetOptions,
  TransferOptions,
  TransferResult,
  TxnRequest,
  TxnResult,
  WriteResult,
} from "./types.js";
import type { TreeValue } from "./value.js";
import type { WriteStore } from "./write-store.js";

export type { PlanConfig };

/** Every write of the tree, planned against an engine's WriteStore under one configuration. */
export interface Planner {
  set(s: WriteStore, key: string, value: TreeValue, o?: SetOptions): WriteResult;
  del(s: WriteStore, key: string, o?: DelOptions): DelResult;
  deltree(s: WriteStore, dir: string, o?: { force?: boolean; ifVersion?: number }): Promise<DeltreeResult>;
  mkindex(s: WriteStore, dir: string): WriteResult;
  append(s: WriteStore, dir: string, value: TreeValue, o?: { vid?: string; ro?: boolean }): WriteResult;
  txn(s: WriteStore, req: TxnRequest): Promise<TxnResult>;
  /** Empties the store: every node but the root, and all history; the root's count goes to 0. */
  clear(s: WriteStore): Promise<WriteResult>;
  /** Writes parsed import lines: directories made, values set (read-only ones only with `force`) and restored. */
  importItems(s: WriteStore, items: ImportItem[], force: boolean): void;
  transfer(
    s: WriteStore,
    from: string,
    to: string,
    o: TransferOptions,
    move: boolean,
  ): Promise<TransferResult>;
}

export function createPlanner(cfg: PlanConfig): Planner {
  return {
    set: (s, key, value, o) => set(cfg, s, key, value, o),
    del: (s, key, o) => del(cfg, s, key, o),
    deltree: (s, dir, o) => deltree(cfg, s, dir, o),
    mkindex,
    append: (s, dir, value, o) => append(cfg, s, dir, value, o),
    txn: (s, req) => txn(cfg, s, req),
    clear,
    importItems: (s, items, force) => importItems(cfg, s, items, force),
    transfer: (s, from, to, o, move) => transfer(cfg, s, from, to, o, move),
  };
}
