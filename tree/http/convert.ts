/**
 * Tree objects to their wire form (./schemas.ts) and back. The server writes with the `…ToJson`
 * converters, the HTTP client reads with the `…FromJson` ones, so the two directions are kept side
 * by side and cannot drift. Values go as `valueToJson` gives them (int64 as a number when safe, else
 * a decimal string). Reading request bodies with exact integers stays with the server.
 */
import { TREE_ERROR_CODES, TreeError, type TreeErrorCode } from "../errors.js";
import type {
  HistoryEntry,
  ListChild,
  ListResult,
  TransferOptions,
  TreeNode,
  TxnOp,
  TxnRequest,
  TxnResult,
  WatchBatch,
  WatchEvent,
  WriteResult,
} from "../types.js";
import { type TreeValue, valueFromJson, valueToJson } from "../value.js";
import type {
  ChildJson,
  DeleteJson,
  ErrorJson,
  HistoryJson,
  ListJson,
  NodeJson,
  TxnCompareJson,
  TxnJson,
  TxnOpJson,
  TxnResultJson,
  WatchBatchJson,
  WatchEventJson,
  WriteJson,
} from "./schemas.js";

export function nodeToJson(node: TreeNode): NodeJson {
  const out: NodeJson = {
    key: node.key,
    kind: node.kind,
    version: node.version,
    createRev: node.createRev,
    modRev: node.modRev,
    mtime: node.mtime,
    ro: node.ro,
  };
  if (node.kind === "index") out.count = node.count;
  else out.value = valueToJson(node.value);
  if (node.vid !== undefined) out.vid = node.vid;
  return out;
}

export function nodeFromJson(w: NodeJson): TreeNode {
  const meta = {
    key: w.key,
    version: w.version,
    createRev: w.createRev,
    modRev: w.modRev,
    mtime: w.mtime,
    ro: w.ro,
    ...(w.vid === undefined ? {} : { vid: w.vid }),
  };
  if (w.kind === "index") return { ...meta, kind: "index", count: w.count ?? 0 };
  return { ...meta, kind: w.kind, value: valueFromJson(w.kind, w.value) };
}

/** A child of a listing: its node's JSON form plus `name` (relative to the listed directory). */
export function childToJson(child: ListChild, name: string = child.name): ChildJson {
  const out: ChildJson = {
    name,
    key: child.key,
    kind: child.kind,
    version: child.version,
    createRev: child.createRev,
    modRev: child.modRev,
    mtime: child.mtime,
    ro: child.ro,
  };
  if (child.kind === "index") out.count = child.count;
  else if (child.value !== undefined) out.value = valueToJson(child.value);
  if (child.vid !== undefined) out.vid = child.vid;
  return out;
}

export function childFromJson(w: ChildJson): ListChild {
  if (w.kind === "index") return { ...(nodeFromJson(w) as TreeNode & { kind: "index" }), name: w.name };
  const meta = {
    name: w.name,
    key: w.key,
    kind: w.kind,
    version: w.version,
    createRev: w.createRev,
    modRev: w.modRev,
    mtime: w.mtime,
    ro: w.ro,
    ...(w.vid === undefined ? {} : { vid: w.vid }),
  };
  return w.value === undefined ? meta : { ...meta, value: valueFromJson(w.kind, w.value) };
}

export function listFromJson(w: ListJson): ListResult {
  const out: ListResult = { key: w.key, children: w.children.map(childFromJson) };
  if (w.next !== undefined) out.next = w.next;
  return out;
}

export function historyToJson(h: HistoryEntry): HistoryJson {
  const out: HistoryJson = {
    kind: h.kind,
    value: valueToJson(h.value),
    version: h.version,
    modRev: h.modRev,
    mtime: h.mtime,
  };
  if (h.deleted) out.deleted = true;
  return out;
}

export function historyFromJson(key: string, h: HistoryJson): HistoryEntry {
  const e: HistoryEntry = {
    key,
    kind: h.kind,
    value: valueFromJson(h.kind, h.value),
    version: h.version,
    modRev: h.modRev,
    mtime: h.mtime,
  };
  if (h.deleted) e.deleted = true;
  return e;
}

export function eventToJson(e: WatchEvent): WatchEventJson {
  const out: WatchEventJson = { type: e.type, key: e.key, rev: e.rev, prevRev: e.prevRev };
  if (e.kind !== undefined) out.kind = e.kind;
  if (e.value !== undefined) out.value = valueToJson(e.value);
  if (e.version !== undefined) out.version = e.version;
  return out;
}

export function eventFromJson(w: WatchEventJson): WatchEvent {
  const ev: WatchEvent = { type: w.type, key: w.key, rev: w.rev, prevRev: w.prevRev };
  if (w.kind !== undefined) ev.kind = w.kind;
  if (w.kind !== undefined && w.kind !== "index" && w.value !== undefined)
    ev.value = valueFromJson(w.kind, w.value);
  if (w.version !== undefined) ev.version = w.version;
  return ev;
}

export function batchToJson(b: WatchBatch): WatchBatchJson {
  return { rev: b.rev, events: b.events.map(eventToJson) };
}

export function batchFromJson(w: WatchBatchJson): WatchBatch {
  return { rev: w.rev, events: w.events.map(eventFromJson) };
}

export function writeToJson(w: WriteResult): WriteJson {
  return { key: w.key, rev: w.rev, version: w.version };
}

/** A value in the typed form `{kind, value}` a PUT body or a txn operation carries. */
export const typedValueToJson = (v: TreeValue): { kind: TreeValue["kind"]; value: unknown } => ({
  kind: v.kind,
  value: valueToJson(v),
});

/** The options of a move or copy that are set, as both sides of the wire carry them (`disown` never travels). */
export function transferFlags(o: TransferOptions): Omit<TransferOptions, "disown"> {
  return {
    ...(o.overwrite ? { overwrite: true } : {}),
    ...(o.force ? { force: true } : {}),
    ...(o.vid !== undefined ? { vid: o.vid } : {}),
    ...(o.unchecked ? { unchecked: true } : {}),
  };
}

function opToJson(op: TxnOp): TxnOpJson {
  if (op.op === "set") {
    const out: TxnOpJson = { op: "set", key: op.key, ...typedValueToJson(op.value) };
    if (op.ro !== undefined) out.ro = op.ro;
    if (op.force) out.force = true;
    if (op.vid !== undefined) out.vid = op.vid;
    if (op.unchecked) out.unchecked = true;
    if (op.ifVersion !== undefined) out.ifVersion = op.ifVersion;
    return out;
  }
  if (op.op === "append") {
    const out: TxnOpJson = { op: "append", key: op.key, ...typedValueToJson(op.value) };
    if (op.ro !== undefined) out.ro = op.ro;
    if (op.vid !== undefined) out.vid = op.vid;
    return out;
  }
  if (op.op === "del")
    return {
      op: "del",
      key: op.key,
      ...(op.force ? { force: true } : {}),
      ...(op.ifVersion !== undefined ? { ifVersion: op.ifVersion } : {}),
    };
  if (op.op === "deltree")
    return op.force ? { op: op.op, key: op.key, force: true } : { op: op.op, key: op.key };
  if (op.op === "move" || op.op === "copy")
    return { op: op.op, key: op.key, to: op.to, ...transferFlags(op) };
  return { op: op.op, key: op.key };
}

/** A transaction as the client sends it (the server reads it back with exact integers). */
export function txnToJson(req: TxnRequest): TxnJson {
  return {
    compare: (req.compare ?? []).map((c): TxnCompareJson => {
      const base = { key: c.key, target: c.target, ...(c.op === undefined ? {} : { op: c.op }) };
      return c.target === "value" && typeof c.value === "object"
        ? { ...base, ...typedValueToJson(c.value) }
        : { ...base, value: c.value };
    }),
    success: (req.success ?? []).map(opToJson),
    failure: (req.failure ?? []).map(opToJson),
  };
}

export function txnResultToJson(r: TxnResult): TxnResultJson {
  return {
    succeeded: r.succeeded,
    rev: r.rev,
    results: r.results.map((x) => {
      if (x === null || x === undefined) return null;
      if ("createRev" in x) return nodeToJson(x);
      // del and deltree results say what they removed, move and copy what landed.
      const extra = x as { deleted?: boolean; removed?: number; keys?: number };
      const out: DeleteJson = writeToJson(x);
      if (extra.deleted !== undefined) out.deleted = extra.deleted;
      if (extra.removed !== undefined) out.removed = extra.removed;
      if (extra.keys !== undefined) out.keys = extra.keys;
      return out;
    }),
  };
}

export function txnResultFromJson(w: TxnResultJson): TxnResult {
  return {
    succeeded: w.succeeded,
    rev: w.rev,
    results: w.results.map((r) => (r === null ? null : "createRev" in r ? nodeFromJson(r as NodeJson) : r)),
  } as TxnResult;
}

const TREE_CODES: ReadonlySet<string> = new Set(TREE_ERROR_CODES);

/**
 * The TreeError an error answer carries (same code, message and details as the server's tree
 * raised), or — for an answer that is not the tree's (401, 415, a proxy's page) — TREE_UNAVAILABLE
 * naming the status.
 */
export function errorFromJson(status: number, text: string): TreeError {
  let body: Partial<ErrorJson> = {};
  try {
    body = JSON.parse(text) as Partial<ErrorJson>;
  } catch {
    // Not our JSON (a proxy's page?): reported below with the status.
  }
  const { code, message, ...details } = body.error ?? ({} as Partial<ErrorJson["error"]>);
  if (details.current && typeof details.current === "object")
    details.current = nodeFromJson(details.current as NodeJson);
  if (typeof code === "string" && TREE_CODES.has(code))
    return new TreeError(code as TreeErrorCode, message ?? code, details);
  return new TreeError(
    "TREE_UNAVAILABLE",
    `the server answered ${status}${code ? ` ${code}` : ""}: ${message ?? text.slice(0, 200)}`,
    { status, ...(code ? { code } : {}) },
  );
}
