/** A txn planned in one write: every compare judged on the keys as they are, then one branch's operations in order. */
import { nodeKey } from "../encoding.js";
import { TreeError } from "../errors.js";
import { parseKey } from "../path.js";
import { checkTxnSize, compareHolds } from "../txn.js";
import type { TreeNode, TxnCompare, TxnOp, TxnRequest, TxnResult, WriteResult } from "../types.js";
import { PENDING, type WriteStore } from "../write-store.js";
import { append, del, deltree, mkindex, type PlanConfig, set } from "./ops.js";
import { transfer } from "./transfer.js";

export async function txn(cfg: PlanConfig, s: WriteStore, req: TxnRequest): Promise<TxnResult> {
  const compare = req.compare ?? [];
  checkTxnSize(req);
  // Every compared key in one read, ahead of judging them.
  s.prefetch(() =>
    compare.map((c) => (typeof c.key === "string" ? nodeKey(c.key) : "")).filter((k) => k !== ""),
  );
  let ok = true;
  for (const c of compare) if (!holds(s, c)) ok = false;
  const results: TxnResult["results"] = [];
  for (const op of ok ? (req.success ?? []) : (req.failure ?? [])) results.push(await runTxnOp(cfg, s, op));
  return { succeeded: ok, rev: PENDING, results };
}

function holds(s: WriteStore, c: TxnCompare): boolean {
  parseKey(c.key);
  const f = s.readNode(c.key);
  if (!f) return compareHolds(c, undefined);
  const node = s.node(c.key, f);
  return compareHolds(c, {
    kind: f.rec.k,
    ...(f.rec.v !== undefined ? { value: f.rec.v } : {}),
    version: node.version,
    createRev: node.createRev,
    modRev: node.modRev,
  });
}

async function runTxnOp(cfg: PlanConfig, s: WriteStore, op: TxnOp): Promise<WriteResult | TreeNode | null> {
  switch (op.op) {
    case "set":
      return set(cfg, s, op.key, op.value, {
        ...(op.ro !== undefined ? { ro: op.ro } : {}),
        ...(op.force ? { force: true } : {}),
        ...(op.vid !== undefined ? { vid: op.vid } : {}),
        ...(op.disown ? { disown: true } : {}),
        ...(op.ifVersion !== undefined ? { ifVersion: op.ifVersion } : {}),
      });
    case "del":
      return del(cfg, s, op.key, {
        ...(op.force ? { force: true } : {}),
        ...(op.ifVersion !== undefined ? { ifVersion: op.ifVersion } : {}),
      });
    case "deltree":
      return deltree(cfg, s, op.key, op.force ? { force: true } : {});
    case "mkindex":
      return mkindex(s, op.key);
    case "append":
      return append(cfg, s, op.key, op.value, {
        ...(op.ro !== undefined ? { ro: op.ro } : {}),
        ...(op.vid !== undefined ? { vid: op.vid } : {}),
      });
    case "move":
    case "copy":
      return transfer(cfg, s, op.key, op.to, op, op.op === "move");
    case "get": {
      parseKey(op.key);
      const f = s.readNode(op.key);
      return f ? s.node(op.key, f) : null;
    }
    default:
      throw new TreeError(
        "TREE_TXN_INVALID",
        `unknown txn operation ${JSON.stringify((op as { op: unknown }).op)}`,
      );
  }
}
