/**
 * What only the server does with the wire format (tree/http holds the shapes and converters it
 * shares with the client): a node's JSON text kept per version, and the reading of request bodies
 * into typed values with exact integers.
 */
import { TreeError } from "../tree/errors.js";
import { exactValue } from "../tree/exact.js";
import {
  ETCD_RESULTS,
  ETCD_TARGETS,
  nodeToJson,
  type TxnCompareJson,
  type TxnJson,
  type TxnOpJson,
  transferFlags,
} from "../tree/http/index.js";
import type { SetOptions, TreeNode, TxnCompare, TxnOp, TxnRequest } from "../tree/index.js";
import type { TreeValue } from "../tree/value.js";

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

/** A value given as `{kind?, value}` in a txn: with a kind read as that kind, else inferred. */
function txnValue(kind: string | undefined, value: unknown): TreeValue {
  return exactValue(kind, value);
}

/**
 * A compare, read in our spelling or etcd's (`"target": "MOD"`, `"result": "NOT_EQUAL"`). Both an
 * `op` and a `result` that disagree are refused rather than one silently winning.
 */
function compareFromJson(c: TxnCompareJson): TxnCompare {
  const target = c.target in ETCD_TARGETS ? ETCD_TARGETS[c.target as keyof typeof ETCD_TARGETS] : c.target;
  const fromResult = c.result === undefined ? undefined : ETCD_RESULTS[c.result];
  if (c.op !== undefined && fromResult !== undefined && c.op !== fromResult)
    throw new TreeError(
      "TREE_TXN_INVALID",
      `compare on ${c.key} gives op "${c.op}" and result "${c.result}", which disagree: give one of the two`,
    );
  const op = c.op ?? fromResult;
  const value: TxnCompare["value"] =
    target === "value"
      ? txnValue(c.kind, c.value)
      : typeof c.value === "bigint"
        ? Number(c.value)
        : (c.value as number | boolean);
  const out: TxnCompare = { key: c.key, target: target as TxnCompare["target"], value };
  if (op !== undefined) out.op = op;
  return out;
}

function opFromJson(o: TxnOpJson): TxnOp {
  switch (o.op) {
    case "set": {
      const op: TxnOp = { op: "set", key: o.key, value: txnValue(o.kind, o.value) };
      if (o.ro !== undefined) op.ro = o.ro;
      if (o.force) op.force = true;
      if (o.vid !== undefined) op.vid = o.vid;
      if (o.unchecked) op.unchecked = true;
      if (o.ifVersion !== undefined) op.ifVersion = o.ifVersion;
      return op;
    }
    case "del":
      return {
        op: "del",
        key: o.key,
        ...(o.force ? { force: true } : {}),
        ...(o.ifVersion !== undefined ? { ifVersion: o.ifVersion } : {}),
      };
    case "deltree":
      return o.force ? { op: o.op, key: o.key, force: true } : { op: o.op, key: o.key };
    case "append": {
      const op: TxnOp = { op: "append", key: o.key, value: txnValue(o.kind, o.value) };
      if (o.ro !== undefined) op.ro = o.ro;
      if (o.vid !== undefined) op.vid = o.vid;
      return op;
    }
    case "move":
    case "copy":
      return { op: o.op, key: o.key, to: o.to, ...transferFlags(o) };
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

/** A PUT of a value: its body read into the value and the set options the body carries (ro, vid). */
export function setFromBody(body: unknown): { value: TreeValue; options: SetOptions } {
  const { value, ro, vid } = valueFromBody(body);
  const options: SetOptions = {};
  if (ro !== undefined) options.ro = ro;
  if (vid !== undefined) options.vid = vid;
  return { value, options };
}
