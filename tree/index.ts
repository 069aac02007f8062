import { ClassicLevel } from "classic-level";
import { MemoryLevel } from "memory-level";
import { TreeError } from "./errors.js";
import { createLevelTree, type TreeOptions } from "./level-tree.js";
import type { Db } from "./mutation.js";
import type { Tree } from "./types.js";

export type { TreeErrorCode } from "./errors.js";
export { isTreeError, TreeError } from "./errors.js";
export {
  DEFAULT_HISTORY_LIMIT,
  type HistoryLimit,
  parseHistoryLimit,
} from "./history-limit.js";
export { createLevelTree, type TreeOptions } from "./level-tree.js";
export {
  compareNames,
  isSystemName,
  isVisibleKey,
  MAX_DEPTH,
  MAX_KEY_BYTES,
  nameOf,
  parentOf,
  parseDirKey,
  parseKey,
  parseValueKey,
  SYSTEM_PREFIX,
} from "./path.js";
export {
  DEFAULT_CACHE_BYTES,
  describeStore,
  parseSize,
  parseStoreUrl,
  resolveStore,
  type StoreLocation,
  type StoreSettings,
  type StoreSpec,
} from "./store-config.js";
export { MAX_TXN_OPS } from "./txn.js";
export type * from "./types.js";
export {
  bool,
  float64,
  formatValue,
  inferValue,
  int64,
  isValueKind,
  type Json,
  json,
  type NodeKind,
  parseLiteral,
  str,
  type TreeValue,
  VALUE_KINDS,
  type ValueKind,
  valueFromJson,
  valueToJson,
} from "./value.js";

export type OpenTreeOptions = TreeOptions &
  (
    | { backend: "memory" }
    | { backend: "classic"; location: string }
    | { backend: "etcd"; endpoints: string[]; prefix?: string }
  );

/** Opens a tree: classic-level in a folder, memory-level, or etcd (loaded only when asked for). */
export async function openTree(options: OpenTreeOptions): Promise<Tree> {
  if (options.backend === "etcd") {
    const { createEtcdTree } = await import("./etcd/index.js");
    const { sync: _embeddedOnly, onClose, ...rest } = options;
    const tree = await createEtcdTree(rest);
    if (!onClose) return tree;
    return { ...tree, close: () => tree.close().then(onClose) };
  }
  let db: Db;
  if (options.backend === "memory") {
    db = new MemoryLevel<string, string>({ keyEncoding: "utf8", valueEncoding: "utf8" });
  } else {
    db = new ClassicLevel<string, string>(options.location, { keyEncoding: "utf8", valueEncoding: "utf8" });
  }
  try {
    await db.open();
  } catch (err) {
    throw openError(err, options.backend === "classic" ? options.location : "memory");
  }
  return createLevelTree(db, options);
}

function openError(err: unknown, location: string): TreeError {
  const cause = (err as { cause?: { code?: string } }).cause;
  if (cause?.code === "LEVEL_LOCKED")
    return new TreeError(
      "TREE_LOCKED",
      `the store at ${location} is in use by another process (a running byteseek server?); stop it, or reach the store through it with KVSPACE=http://127.0.0.1:7411`,
      { location },
      err,
    );
  return new TreeError(
    "TREE_UNAVAILABLE",
    `cannot open the store at ${location}: ${(err as Error).message}`,
    { location },
    err,
  );
}
