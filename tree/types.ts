import type { Json, NodeKind, TreeValue, ValueKind } from "./value.js";

/** Metadata every node carries. Revisions are global (one counter, as etcd); version is per key. */
export interface NodeMeta {
  key: string;
  kind: NodeKind;
  /** Per key, from 1, bumped on each write; starts again at 1 after a delete. */
  version: number;
  /** Revision of the write that created the key. */
  createRev: number;
  /** Revision of the last write to the key. */
  modRev: number;
  /** Milliseconds since the epoch of the last write. */
  mtime: number;
  ro: boolean;
  /** Owner: the run that wrote it, when one did. */
  vid?: string;
}

/** A value node: `/a/b`. */
export interface ValueNode extends NodeMeta {
  kind: ValueKind;
  value: TreeValue;
}

/** A directory node: `/a/b/`. `count` is its number of direct children (system entries included). */
export interface DirNode extends NodeMeta {
  kind: "index";
  count: number;
}

export type TreeNode = ValueNode | DirNode;

/** What every write answers. */
export interface WriteResult {
  key: string;
  /** The global revision after the write. */
  rev: number;
  /** The key's new version (0 when the write deleted it). */
  version: number;
}

export interface SetOptions {
  /** Compare-and-set: succeed only if the key's current version is this (0 = must not exist). */
  ifVersion?: number;
  /** Create-only: fail with TREE_EXISTS if the key exists. */
  create?: boolean;
  /** Mark the key read-only (or writable with `false`); omitted keeps the current flag. */
  ro?: boolean;
  /** Write even if the key is read-only. */
  force?: boolean;
  /** The run writing it, recorded as the key's owner; absent: the owner stays as it was (unless `disown`). */
  vid?: string;
  /**
   * Clear the key's owner run (a write without `vid` otherwise keeps it): byteseek's checked tree
   * sets it on a person's write under /byteseek/, so what a person wrote is theirs.
   */
  disown?: boolean;
  /**
   * Store the value even if a checking layer over the tree would refuse it (byteseek checks its
   * tool declarations and policy: tools/catalogue/checked-tree.ts). The storage engines ignore it.
   */
  unchecked?: boolean;
  /**
   * The embedded store at `BYTESEEK_SYNC=always`: commit this write without an fsync of its own.
   * It reaches the disk with the next synced commit (LevelDB writes its log in order, so a later
   * synced write carries every earlier one — but across a switch of log file, docs/ARCHITECTURE.md
   * "Durable runs"); a killed process never loses it, a power cut or an
   * OS crash may, until then. For a write whose loss nothing acknowledged depends on (a call's
   * intent record when the call is safe to repeat). Ignored by the other engines and settings.
   */
  deferSync?: boolean;
}

export interface DelOptions {
  ifVersion?: number;
  force?: boolean;
}

export interface DelResult extends WriteResult {
  /** False when there was nothing to delete (not an error). */
  deleted: boolean;
}

export interface DeltreeResult extends WriteResult {
  /** How many keys (values and directories, the directory itself included) were removed. */
  removed: number;
}

export interface ListOptions {
  /** At most this many children (default 1000). */
  limit?: number;
  /** Start after this child name (as returned: directories with their trailing '/'). */
  after?: string;
  /** Include values (default true). */
  values?: boolean;
  /** Include system entries (names starting with '‥'); default false. */
  system?: boolean;
}

/** One child in a listing. `name` ends with '/' for a directory. */
export type ListChild =
  | (Omit<ValueNode, "value"> & { name: string; value?: TreeValue })
  | (DirNode & { name: string });

export interface ListResult {
  key: string;
  children: ListChild[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/** A compare in a transaction, as etcd's: target a field of a key and compare it. */
export interface TxnCompare {
  key: string;
  target: "version" | "createRev" | "modRev" | "value" | "exists";
  op?: "==" | "!=" | "<" | ">";
  /** For `value` a TreeValue; for `exists` a boolean; otherwise a number. */
  value: number | boolean | TreeValue;
}

export type TxnOp =
  | {
      op: "set";
      key: string;
      value: TreeValue;
      ro?: boolean;
      force?: boolean;
      vid?: string;
      /** As `SetOptions.disown`. */
      disown?: boolean;
      /** As `SetOptions.unchecked`. */
      unchecked?: boolean;
      /** As `SetOptions.ifVersion`: otherwise the whole transaction fails with the set's own error. */
      ifVersion?: number;
    }
  /** `ifVersion` as `DelOptions.ifVersion`: otherwise the whole transaction fails with the del's own error. */
  | { op: "del"; key: string; force?: boolean; ifVersion?: number }
  | { op: "deltree"; key: string; force?: boolean }
  | { op: "mkindex"; key: string }
  /** As `Tree.append`: `key` is the directory; the result's key names the child made. */
  | { op: "append"; key: string; value: TreeValue; ro?: boolean; vid?: string }
  | { op: "get"; key: string }
  /** As `move()` (tree/transfer.ts): `key` lands at `to` and is gone from where it was. */
  | ({ op: "move"; key: string; to: string } & TransferOptions)
  /** As `copy()` (tree/transfer.ts): `key` is copied to `to`. */
  | ({ op: "copy"; key: string; to: string } & TransferOptions);

/** How a move or copy treats what it meets (tree/transfer.ts says the rules). */
export interface TransferOptions {
  /** Replace what is at the target (TREE_EXISTS otherwise). */
  overwrite?: boolean;
  /** Move read-only keys, and overwrite read-only targets (TREE_READ_ONLY otherwise). */
  force?: boolean;
  /** The run moving or copying: the owner of every key written; absent: each keeps its source's owner. */
  vid?: string;
  /** Clear the owner run of every key written (as `SetOptions.disown`). */
  disown?: boolean;
  /** As `SetOptions.unchecked`: the values landing are not checked by a checking layer. */
  unchecked?: boolean;
}

/** What a move or copy answers (a txn's result for its op). `key` is the target; `keys` how many landed there. */
export interface TransferResult extends WriteResult {
  keys: number;
}

export interface TxnRequest {
  compare?: TxnCompare[];
  success?: TxnOp[];
  failure?: TxnOp[];
}

export interface TxnResult {
  succeeded: boolean;
  rev: number;
  /** One entry per operation run: a write's result, or a get's node (undefined when absent). */
  results: Array<WriteResult | TreeNode | null>;
}

/** A change. `deltree` removes `key` (a directory) and everything under it in one event. */
export interface WatchEvent {
  type: "put" | "delete" | "deltree";
  key: string;
  kind?: NodeKind;
  value?: TreeValue;
  rev: number;
  /** modRev of the key before this change (0 if it did not exist). */
  prevRev: number;
  version?: number;
}

export interface WatchOptions {
  /** Replay every change with rev >= fromRev still in history, then follow live. */
  fromRev?: number;
  signal?: AbortSignal;
}

/** A batch of events sharing one revision: events of one revision are never split. */
export interface WatchBatch {
  rev: number;
  events: WatchEvent[];
}

/**
 * One line of an export: a value or an (empty or not) directory. A value carries its version
 * (when above 1) and its retained previous versions (oldest first), so an import restores it as it
 * was; revisions and the value's mtime are the exporting store's and are not carried (an import
 * is a write).
 */
export interface ExportEntry {
  key: string;
  kind: NodeKind;
  value?: Json;
  ro?: boolean;
  vid?: string;
  /**
   * Import only (an export never writes it): the line clears the key's owner run, as a set with
   * `disown` does. The tools' checked tree marks a person's lines this way (no `vid`, under /byteseek/).
   */
  disown?: boolean;
  version?: number;
  history?: ExportedVersion[];
}

/** A retained previous version in an export line. */
export interface ExportedVersion {
  kind: ValueKind;
  value: Json;
  version: number;
  mtime: number;
  /** The value as it was when it was deleted (it was created again since). */
  deleted?: boolean;
}

export interface ImportOptions {
  /** Overwrite read-only keys too. */
  force?: boolean;
  /** As `SetOptions.unchecked`, for every line. */
  unchecked?: boolean;
}

export interface ImportResult {
  imported: number;
  rev: number;
}

export interface HistoryEntry {
  key: string;
  kind: ValueKind;
  value: TreeValue;
  version: number;
  modRev: number;
  mtime: number;
  /** True for the entry recording the value as it was when it was deleted. */
  deleted?: boolean;
}

export interface GetOptions {
  /**
   * `local` (default): a server sharing the tree (etcd) may answer from its cache, which holds
   * every write it made and others' within one watch delay; `linearizable`: a quorum read, as
   * fresh as any write acknowledged anywhere before it started. The embedded store is always
   * linearizable (one process owns it).
   */
  consistency?: "local" | "linearizable";
}

/**
 * The tree. Every operation validates its keys (TREE_INVALID_KEY) and is atomic; writes are
 * totally ordered by the global revision.
 */
export interface Tree {
  /** A value or directory node, or undefined when absent. Works on system entries. */
  get(key: string, options?: GetOptions): Promise<TreeNode | undefined>;
  /** Writes a value, creating missing parent directories. */
  set(key: string, value: TreeValue, options?: SetOptions): Promise<WriteResult>;
  del(key: string, options?: DelOptions): Promise<DelResult>;
  /** Removes a directory and everything under it atomically. Absent → removed 0. */
  deltree(dir: string, options?: { force?: boolean; ifVersion?: number }): Promise<DeltreeResult>;
  /** Creates a directory (and missing parents); an existing one is left as it is. */
  mkindex(dir: string): Promise<WriteResult>;
  list(dir: string, options?: ListOptions): Promise<ListResult>;
  /** Creates the next dense child `<n>` of `dir` (0, 1, 2, …) holding `value`. */
  append(
    dir: string,
    value: TreeValue,
    options?: { vid?: string; ro?: boolean; deferSync?: boolean },
  ): Promise<WriteResult>;
  txn(request: TxnRequest): Promise<TxnResult>;
  watch(prefix: string, options?: WatchOptions): AsyncIterable<WatchBatch>;
  /** Retained previous versions of a value, newest first. */
  history(key: string): Promise<HistoryEntry[]>;
  export(dir?: string): AsyncIterable<ExportEntry>;
  /**
   * All or nothing: on a bad line, nothing is written and the error names the line. A read-only
   * key is overwritten only with `force` (else TREE_READ_ONLY naming the line); a line's `ro` is
   * written as given, and a line without one keeps the key's flag.
   */
  import(
    entries: AsyncIterable<ExportEntry | string> | Iterable<ExportEntry | string>,
    options?: ImportOptions,
  ): Promise<ImportResult>;
  /** Empties the whole store (the revision counter goes on). */
  clear(): Promise<WriteResult>;
  /** The current global revision, as far as this process has seen. */
  revision(): number;
  /**
   * The store's current revision, asking the store when other processes may write it (etcd).
   * Absent when `revision()` is always current (the embedded store: one process owns it).
   * Caches keyed on the revision call this, so a write by another server is never missed.
   */
  syncRevision?(): Promise<number>;
  /** Oldest revision a watch can still resume from. */
  compactedRev(): number;
  /**
   * Named holds bound to the store's own leases, where it has them (etcd): a hold is kept alive
   * while its process lives and vanishes when the lease expires. Absent on other engines.
   */
  leases?: StoreLeases;
  close(): Promise<void>;
}

/** Holds kept by the store's native leases (etcd's: granted with a TTL, kept alive, revoked). */
export interface StoreLeases {
  /**
   * Creates the hold `name` with `holder` (a JSON document naming who holds it) on a new lease of
   * `ttlMs`, kept alive until released or the process ends; undefined when `name` is held already.
   */
  take(name: string, holder: unknown, ttlMs: number): Promise<StoreHold | undefined>;
  /** The holder of `name` as taken, or undefined when nobody holds it (never taken, released or expired). */
  holder(name: string): Promise<unknown>;
  /**
   * Ends the hold `name` if `holder` still holds it (a caller that knows that holder is gone, e.g. a
   * dead process of its own machine, need not wait for the lease to expire). Answers whether it did.
   */
  breakHold(name: string, holder: unknown): Promise<boolean>;
}

export interface StoreHold {
  /** Ends the hold at once (revokes its lease). */
  release(): Promise<void>;
  /** Whether the store said the lease is gone (expired while this process could not renew it). */
  lost(): boolean;
}
