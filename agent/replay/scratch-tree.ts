/**
 * The tree a replay runs on: the keys the run owns (its session, records, usage and vthread state)
 * live in a scratch tree (memory-level, dropped after), everything else is the real tree. So the
 * real loop can replay run `<vid>` under its own id — the same prompts, the same record keys —
 * without touching what the run recorded, and a store write costs nothing (no fsync per message).
 *
 * `realWrites: false` (a replay that runs no tool) refuses every write outside the run's keys: the
 * loop itself writes nothing else, so such a write would be a tool's effect leaking through; and
 * it reads each real key once (the tree as of the replay's start).
 */
import { runFamilies } from "../../shared/keys.js";
import { usageKey } from "../../tools/records/usage.js";
import { TreeError } from "../../tree/errors.js";
import type { Tree, TxnOp, TxnRequest } from "../../tree/types.js";

export interface ScratchTreeOptions {
  real: Tree;
  scratch: Tree;
  vid: string;
  /** Let writes outside the run's keys reach the real tree (a replay whose tools run again). */
  realWrites: boolean;
}

/** Whether `key` belongs to run `vid`'s own state: what its loop writes about itself. */
export function runOwns(vid: string): (key: string) => boolean {
  const prefixes = runFamilies.map((dir) => `${dir}${vid}/`);
  const usage = usageKey(vid);
  return (key) => key === usage || prefixes.some((p) => key.startsWith(p));
}

export function createScratchTree({ real, scratch, vid, realWrites }: ScratchTreeOptions): Tree {
  const owns = runOwns(vid);
  const read = (key: string): Tree => (owns(key) ? scratch : real);
  function write(key: string): Tree {
    if (owns(key)) return scratch;
    if (realWrites) return real;
    throw new TreeError(
      "TREE_READ_ONLY",
      `a replay writes only run ${vid}'s own keys; ${key} is outside them (replay with --live-tools to run tools again)`,
    );
  }
  function txnTree(request: TxnRequest): Tree {
    const keys = [
      ...(request.compare ?? []).map((c) => c.key),
      ...[...(request.success ?? []), ...(request.failure ?? [])].flatMap((op: TxnOp) =>
        op.op === "move" || op.op === "copy" ? [op.key, op.to] : [op.key],
      ),
    ];
    const sides = new Set(keys.map((k) => owns(k)));
    if (sides.size > 1)
      throw new TreeError(
        "TREE_TXN_INVALID",
        `a replay cannot run one transaction over run ${vid}'s own keys and other keys`,
      );
    const first = keys[0];
    return first === undefined ? scratch : owns(first) ? scratch : write(first);
  }

  // a replay that runs no tool reads the real tree as of its start: each key once (the prompt
  // parts, read on every step)
  const seen = new Map<string, ReturnType<Tree["get"]>>();
  function get(key: string, options?: Parameters<Tree["get"]>[1]): ReturnType<Tree["get"]> {
    if (owns(key)) return scratch.get(key, options);
    if (realWrites) return real.get(key, options);
    let node = seen.get(key);
    if (!node) {
      node = real.get(key, options);
      seen.set(key, node);
    }
    return node;
  }

  const tree: Tree = {
    get,
    set: (key, value, options) => write(key).set(key, value, options),
    del: (key, options) => write(key).del(key, options),
    deltree: (dir, options) => write(dir).deltree(dir, options),
    mkindex: (dir) => write(dir).mkindex(dir),
    list: (dir, options) => read(dir).list(dir, options),
    append: (dir, value, options) => write(dir).append(dir, value, options),
    txn: (request) => txnTree(request).txn(request),
    watch: (prefix, options) => read(prefix).watch(prefix, options),
    history: (key) => read(key).history(key),
    export: (dir) => read(dir ?? "/").export(dir),
    import(entries, options) {
      if (!realWrites) throw new TreeError("TREE_READ_ONLY", "a replay imports nothing");
      return real.import(entries, options);
    },
    clear() {
      throw new TreeError("TREE_READ_ONLY", "a replay never clears the store");
    },
    // caches keyed on the revision (the catalogue, memory recall) read the real tree
    revision: () => real.revision(),
    compactedRev: () => real.compactedRev(),
    close: () => scratch.close(),
  };
  if (real.syncRevision) {
    const sync = real.syncRevision.bind(real);
    tree.syncRevision = () => sync();
  }
  return tree;
}
