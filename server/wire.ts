/**
 * The JSON form of tree objects on the wire (values as `valueToJson` gives them: int64 as a number
 * when safe, else a decimal string), and the reading of request bodies into typed values.
 */
import { TreeError } from "../tree/errors.js";
import type {
  HistoryEntry,
  ListChild,
  SetOptions,
  TreeNode,
  TxnCompare,
  TxnOp,
  TxnRequest,
  TxnResult,
  WatchBatch,
  WatchEvent,
  WriteResult,
} from "../tree/types.js";
import { inferValue, type Json, type TreeValue, valueFromJson, valueToJson } from "../tree/value.js";
import { checkInexactDouble, exactInt64, exactJson } from "./exact-json.js";
import type {
  HistoryJson,
  NodeJson,
  TxnCompareJson,
  TxnJson,
  TxnOpJson,
  TxnResultJson,
  WatchBatchJson,
  WatchEventJson,
} from "./schemas.js";

/**
 * The JSON text a GET of `node` answers. The tree hands out the same frozen node until the key
 * changes, so the text is made once per version (and goes with the node when the tree drops it).
 */
export function nodeBody(node: TreeNode): string {
  let body = nodeBodies.get(node);
  if (body === undefined) {
    body = JSON.stringify(nodeToJson(node));
    nodeBodies.set(node, body);
  }
  return body;
}
const nodeBodies = new WeakMap<TreeNode, string>();

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

/** A child of a listing: its node's JSON form plus `name` (relative to the listed directory). */
export function childToJson(child: ListChild, name: string = child.name): NodeJson & { name: string } {
  const out: NodeJson & { name: string } = {
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

export function eventToJson(e: WatchEvent): WatchEventJson {
  const out: WatchEventJson = { type: e.type, key: e.key, rev: e.rev, prevRev: e.prevRev };
  if (e.kind !== undefined) out.kind = e.kind;
  if (e.value !== undefined) out.value = valueToJson(e.value);
  if (e.version !== undefined) out.version = e.version;
  return out;
}

export function batchToJson(b: WatchBatch): WatchBatchJson {
  return { rev: b.rev, events: b.events.map(eventToJson) };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const TYPED_KEYS = new Set(["kind", "value", "ro", "vid"]);

/**
 * Reads a PUT/POST body. `{"kind", "value", "ro"?, "vid"?}` (only these keys) is the typed form; any
 * other JSON value is stored with its kind inferred. To store an object that has just those keys
 * as json, wrap it: `{"kind": "json", "value": {...}}`.
 */
export function valueFromBody(body: unknown): { value: TreeValue; ro?: boolean; vid?: string } {
  if (body === undefined)
    throw new TreeError(
      "TREE_INVALID_VALUE",
      "a value is missing: send a JSON body (Content-Type: application/json)",
    );
  if (
    isPlainObject(body) &&
    "kind" in body &&
    "value" in body &&
    Object.keys(body).every((k) => TYPED_KEYS.has(k))
  ) {
    if (body.ro !== undefined && typeof body.ro !== "boolean")
      throw new TreeError("TREE_INVALID_VALUE", "ro must be true or false");
    if (body.vid !== undefined && typeof body.vid !== "string")
      throw new TreeError("TREE_INVALID_VALUE", "vid must be a string");
    const out: { value: TreeValue; ro?: boolean; vid?: string } = {
      value: exactValue(body.kind, body.value),
    };
    if (body.ro !== undefined) out.ro = body.ro as boolean;
    if (body.vid !== undefined) out.vid = body.vid as string;
    return out;
  }
  return { value: exactValue(undefined, body) };
}

/**
 * A value from a request (server/exact-json.ts parsed it: integers beyond 2^53 are bigints), read
 * as `kind` or, without one, with its kind inferred — never changed silently: an integer is kept
 * exactly or refused with 400.
 */
export function exactValue(kind: unknown, raw: unknown): TreeValue {
  if (kind === undefined) {
    if (typeof raw === "bigint") return { kind: "int64", value: exactInt64(raw) };
    if (typeof raw === "number") checkInexactDouble(raw);
    else if (typeof raw === "object" && raw !== null) return inferValue(exactJson(raw));
    return inferValue(raw as Json);
  }
  if (typeof raw === "bigint") {
    if (kind === "int64") return { kind: "int64", value: exactInt64(raw) };
    // A double was asked for: rounding is what float64 means.
    if (kind === "float64") return valueFromJson(kind, Number(raw));
  }
  if (kind === "json" && typeof raw === "object" && raw !== null) return valueFromJson(kind, exactJson(raw));
  return valueFromJson(kind, raw);
}

/** A value given as `{kind?, value}` in a txn: with a kind read as that kind, else inferred. */
function txnValue(kind: string | undefined, value: unknown): TreeValue {
  return exactValue(kind, value);
}

function compareFromJson(c: TxnCompareJson): TxnCompare {
  const value: TxnCompare["value"] =
    c.target === "value"
      ? txnValue(c.kind, c.value)
      : typeof c.value === "bigint"
        ? Number(c.value)
        : (c.value as number | boolean);
  return c.op === undefined
    ? { key: c.key, target: c.target, value }
    : { key: c.key, target: c.target, op: c.op, value };
}

function opFromJson(o: TxnOpJson): TxnOp {
  switch (o.op) {
    case "set": {
      const op: TxnOp = { op: "set", key: o.key, value: txnValue(o.kind, o.value) };
      if (o.ro !== undefined) op.ro = o.ro;
      if (o.force) op.force = true;
      if (o.vid !== undefined) op.vid = o.vid;
      return op;
    }
    case "del":
    case "deltree":
      return o.force ? { op: o.op, key: o.key, force: true } : { op: o.op, key: o.key };
    case "mkindex":
    case "get":
      return { op: o.op, key: o.key };
  }
}

export function txnFromJson(t: TxnJson): TxnRequest {
  return {
    compare: (t.compare ?? []).map(compareFromJson),
    success: (t.success ?? []).map(opFromJson),
    failure: (t.failure ?? []).map(opFromJson),
  };
}

export function txnResultToJson(r: TxnResult): TxnResultJson {
  return {
    succeeded: r.succeeded,
    rev: r.rev,
    results: r.results.map((x) => {
      if (x === null || x === undefined) return null;
      if ("createRev" in x) return nodeToJson(x);
      // del and deltree results say what they removed.
      const extra = x as { deleted?: boolean; removed?: number };
      return {
        ...writeToJson(x),
        ...(extra.deleted === undefined ? {} : { deleted: extra.deleted }),
        ...(extra.removed === undefined ? {} : { removed: extra.removed }),
      };
    }),
  };
}

/** A PUT of a value: its body read into the value and the set options the body carries (ro, vid). */
export function setFromBody(body: unknown): { value: TreeValue; options: SetOptions } {
  const { value, ro, vid } = valueFromBody(body);
  const options: SetOptions = {};
  if (ro !== undefined) options.ro = ro;
  if (vid !== undefined) options.vid = vid;
  return { value, options };
}

export function writeToJson(w: WriteResult): { key: string; rev: number; version: number } {
  return { key: w.key, rev: w.rev, version: w.version };
}
