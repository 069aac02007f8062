/**
 * A move (or copy) of `from` to `to` in one write: the target ends up exactly as the source was —
 * each key written as a set would write it over what the target held (its version goes on from
 * the target's, as an etcd put; a new key starts at 1), target keys the source does not have
 * deleted, and for a move the source removed as del/deltree removes it (its values' last versions
 * kept in history where history is kept). tree/transfer.ts states the rules.
 *
 * `transfer` → `readEnds` (the source and what the target held, refused where read-only) →
 * the source removed (a move) → `clearTarget` → `land` each source node at the target.
 */
import { histListKey, nodeKey } from "../encoding.js";
import { TreeError } from "../errors.js";
import { parentOf } from "../path.js";
import { checkTransfer } from "../transfer.js";
import type { TransferOptions, TransferResult } from "../types.js";
import { type Found, PENDING, type PlanRecord, type WriteStore } from "../write-store.js";
import { adjustCount, ancestors, ensureDir } from "./dirs.js";
import { putValue } from "./history.js";
import { del, deltree, type PlanConfig } from "./ops.js";
import { readSubtree } from "./subtree.js";

/** A node of a subtree, by its path relative to the subtree's top ("" for the top itself). */
type SubtreeNode = { rel: string; rec: PlanRecord };

export async function transfer(
  cfg: PlanConfig,
  s: WriteStore,
  from: string,
  to: string,
  o: TransferOptions,
  move: boolean,
): Promise<TransferResult> {
  checkTransfer(from, to);
  s.prefetch(() => [nodeKey(from), nodeKey(parentOf(from)!), nodeKey(to), ...ancestors(to).map(nodeKey)]);
  const { dst, nodes, old } = await readEnds(s, from, to, o, move);
  // What the writes below read, in one go: the target keys they overwrite, and the history a
  // deletion may have kept for the keys they create.
  s.prefetch(() => {
    const had = new Set(old.map((n) => n.rel));
    return [
      ...old.map((n) => nodeKey(to + n.rel)),
      ...nodes.filter((n) => n.rec.k !== "index" && !had.has(n.rel)).map((n) => histListKey(to + n.rel)),
    ];
  });
  s.bump();
  if (move) {
    if (from.endsWith("/")) await deltree(cfg, s, from, { force: true });
    else del(cfg, s, from, { force: true });
  }
  clearTarget(cfg, s, to, old, nodes);
  const parent = parentOf(to)!;
  const top = ensureDir(s, parent);
  if (!dst) adjustCount(s, parent, +1, top);
  land(cfg, s, to, nodes, top, o);
  const landed = s.readNode(to)!;
  return { key: to, rev: PENDING, version: landed.rec.ver, keys: nodes.length };
}

/**
 * The source's nodes and the target's, refusing a missing source, an existing target without
 * `overwrite`, and (unless forced) a read-only node in a moved source or a replaced target.
 */
async function readEnds(
  s: WriteStore,
  from: string,
  to: string,
  o: TransferOptions,
  move: boolean,
): Promise<{ dst: Found | undefined; nodes: SubtreeNode[]; old: SubtreeNode[] }> {
  const src = s.readNode(from);
  if (!src)
    throw new TreeError("TREE_NOT_FOUND", `${from} does not exist: nothing to ${move ? "move" : "copy"}`, {
      key: from,
    });
  const dst = s.readNode(to);
  if (dst && !o.overwrite)
    throw new TreeError(
      "TREE_EXISTS",
      `${to} already exists; ${move ? "move" : "copy"} with overwrite to replace it, or choose another target`,
      { key: to },
    );
  const nodes = await readSubtree(s, from, src);
  if (move && !o.force) {
    const ro = nodes.find((n) => n.rec.ro === 1);
    if (ro)
      throw new TreeError(
        "TREE_READ_ONLY",
        `${from + ro.rel} is read-only, so ${from} cannot be moved; force the move, copy it instead, or mark it writable first`,
        { key: from + ro.rel },
      );
  }
  const old = dst ? await readSubtree(s, to, dst) : [];
  if (!o.force) {
    const ro = old.find((n) => n.rec.ro === 1);
    if (ro)
      throw new TreeError(
        "TREE_READ_ONLY",
        `${to + ro.rel} is read-only, so ${to} cannot be replaced; force it, or mark it writable first`,
        { key: to + ro.rel },
      );
  }
  return { dst, nodes, old };
}

/** Deletes the target keys the source does not have, deepest first (a directory once it is empty). */
function clearTarget(
  cfg: PlanConfig,
  s: WriteStore,
  to: string,
  old: SubtreeNode[],
  nodes: SubtreeNode[],
): void {
  const landing = new Set(nodes.map((n) => n.rel));
  for (const n of [...old].reverse())
    if (!landing.has(n.rel)) {
      if (n.rel === "") continue; // never: the target itself always lands
      del(cfg, s, to + n.rel, { force: true });
    }
}

/** Writes each source node at the target, top first, over what the target holds there. */
function land(
  cfg: PlanConfig,
  s: WriteStore,
  to: string,
  nodes: SubtreeNode[],
  top: Found,
  o: TransferOptions,
): void {
  const dirs = new Map<string, Found>([["", { ...top }]]);
  const owner = (rec: PlanRecord) => o.vid ?? (o.disown ? undefined : rec.vid);
  for (const n of nodes) {
    const key = to + n.rel;
    const prev = s.readNode(key);
    const above = n.rel === "" ? top : dirs.get(parentOf(key)!.slice(to.length));
    if (n.rec.k === "index") {
      const rec: PlanRecord = prev
        ? { ...prev.rec, n: n.rec.n ?? 0 }
        : { k: "index", ver: 1, mt: s.now, n: n.rec.n ?? 0 };
      if (!prev && s.flagsKeptHistory && above?.rec.hk === 1) rec.hk = 1;
      if (n.rec.s !== undefined) rec.s = n.rec.s;
      else delete rec.s;
      if (n.rec.ro === 1) rec.ro = 1;
      else delete rec.ro;
      s.putNode(key, rec, prev?.cr ?? PENDING);
      dirs.set(n.rel, { rec, cr: prev?.cr ?? PENDING, mr: PENDING });
      if (!prev) s.events.push({ t: "put", key, k: "index", ver: 1, p: 0 });
      continue;
    }
    const rec: PlanRecord = { k: n.rec.k, v: n.rec.v ?? null, ver: (prev?.rec.ver ?? 0) + 1, mt: s.now };
    if (n.rec.ro === 1) rec.ro = 1;
    const vid = owner(n.rec);
    if (vid !== undefined) rec.vid = vid;
    putValue(cfg.history, s, key, rec, prev, above);
    s.events.push({ t: "put", key, k: n.rec.k, v: rec.v, p: prev?.mr ?? 0, ver: rec.ver });
  }
}
