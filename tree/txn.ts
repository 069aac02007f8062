/**
 * The parts of a transaction every backend shares: its size limit and how a compare is judged
 * against a key's current state. Backends only read the key and run the operations.
 */
import { TreeError } from "./errors.js";
import type { TxnCompare, TxnRequest } from "./types.js";
import { type Json, type NodeKind, type TreeValue, valueToJson } from "./value.js";

/** Most operations in one transaction, as etcd. */
export const MAX_TXN_OPS = 128;

const TARGETS: readonly string[] = ["version", "createRev", "modRev", "value", "exists"];
const OPS: readonly string[] = ["==", "!=", "<", ">"];

/** What a compare looks at: the key's kind, stored (JSON form) value and revisions; undefined when absent. */
export interface CompareSubject {
  kind: NodeKind;
  value?: Json;
  version: number;
  createRev: number;
  modRev: number;
}

/** Throws TREE_TXN_INVALID when the request has more operations than a transaction may. */
export function checkTxnSize(req: TxnRequest): void {
  const total = (req.compare?.length ?? 0) + (req.success?.length ?? 0) + (req.failure?.length ?? 0);
  if (total > MAX_TXN_OPS)
    throw new TreeError(
      "TREE_TXN_INVALID",
      `a transaction has at most ${MAX_TXN_OPS} operations, got ${total}`,
    );
}

/** Does compare `c` hold for the key's current state? Throws TREE_TXN_INVALID for a malformed compare. */
export function compareHolds(c: TxnCompare, current: CompareSubject | undefined): boolean {
  const op = c.op ?? "==";
  if (!TARGETS.includes(c.target))
    throw new TreeError(
      "TREE_TXN_INVALID",
      `unknown compare target ${JSON.stringify(c.target)}; use one of ${TARGETS.join(", ")}`,
      { compare: c },
    );
  if (!OPS.includes(op))
    throw new TreeError(
      "TREE_TXN_INVALID",
      `unknown compare operator ${JSON.stringify(op)}; use ==, !=, < or >`,
    );
  if (c.target === "exists") return (current !== undefined) === (op === "!=" ? !c.value : Boolean(c.value));
  if (c.target === "value") {
    if (op !== "==" && op !== "!=")
      throw new TreeError("TREE_TXN_INVALID", `compare on value supports only == and !=, not ${op}`);
    if (!current || current.kind === "index" || typeof c.value !== "object") return op === "!=";
    const want = JSON.stringify([c.value.kind, valueToJson(c.value as TreeValue)]);
    const have = JSON.stringify([current.kind, current.value]);
    return op === "==" ? want === have : want !== have;
  }
  if (typeof c.value !== "number")
    throw new TreeError("TREE_TXN_INVALID", `compare on ${c.target} takes a number`, { compare: c });
  const have = current ? current[c.target as "version" | "createRev" | "modRev"] : 0;
  switch (op) {
    case "==":
      return have === c.value;
    case "!=":
      return have !== c.value;
    case "<":
      return have < c.value;
    default:
      return have > c.value;
  }
}
