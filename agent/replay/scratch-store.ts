/**
 * The scratch store of a recorded replay (one that runs no tool and keeps nothing): the run's own
 * keys, held as the objects written — no encoding, no change log, no history — for the few
 * operations the loop, the lease and the recorded runtime make on them (get, set, del, append,
 * list, txn). A replay drives the loop through ~35 writes and ~50 reads of these keys; on a tree
 * engine each paid its key and value encoding and checks, most of a replay's time. The write
 * judgements are the tree's own (tree/rules.ts, tree/txn.ts: versions, create-only, read-only,
 * compares), so a refusal reads as the tree's. Values are not size-checked: each is the loop's copy
 * of a value the run stored. A replay that runs tools or keeps its run uses a memory tree
 * instead (agent/replay/replay.ts), where every tree rule holds.
 */
import { TreeError } from "../../tree/errors.js";
import { compareNames, isSystemName, nameOf, parentOf, parseDirKey, parseKey } from "../../tree/path.js";
import { judgeDel, judgeSet, listLimit } from "../../tree/rules.js";
import { checkTxnSize, compareHolds } from "../../tree/txn.js";
import type {
  DelOptions,
  DirNode,
  ListChild,
  SetOptions,
  Tree,
  TreeNode,
  TxnOp,
  TxnRequest,
  WriteResult,
} from "../../tree/types.js";
import { type TreeValue, valueToJson } from "../../tree/value.js";

/** A stored node with what the judgements read (`ver`, `ro`, `n`), and its directory's sequence. */
interface Held {
  node: TreeNode;
  ver: number;
  ro?: 1;
  n?: number;
  /** Directories: the next `<n>` an append makes. */
  seq?: number;
}

/**
 * A store of the keys `owns` says are the run's; a directory is made for each parent of a key
 * written while the parent is the run's too (above them, the real tree answers).
 */
export function createScratchStore(owns: (key: string) => boolean): Tree {
  const held = new Map<string, Held>();
  let rev = 0;
  /** Inside a transaction: its writes share one revision, bumped by the first. */
  let txnRev: number | undefined;
  /** Inside a transaction: what each key held before its first write there (undefined: absent). */
  let undo: Map<string, Held | undefined> | undefined;
  let closed = false;

  function keep(key: string, h: Held): void {
    if (undo && !undo.has(key)) undo.set(key, held.get(key));
    held.set(key, h);
  }

  function drop(key: string): void {
    if (undo && !undo.has(key)) undo.set(key, held.get(key));
    held.delete(key);
  }

  /** The revision a write is made at. */
  function bump(): number {
    if (txnRev === undefined) return ++rev;
    if (txnRev === 0) txnRev = ++rev;
    return txnRev;
  }

  function check(): void {
    if (closed) throw new TreeError("TREE_CLOSED", "the replay's scratch store is closed");
  }

  function meta(key: string, h: Held | undefined, o: { vid?: string; ro?: boolean }, kind: TreeNode["kind"]) {
    const ro = o.ro ?? h?.node.ro ?? false;
    return {
      key,
      kind,
      version: (h?.ver ?? 0) + 1,
      createRev: h?.node.createRev ?? rev,
      modRev: rev,
      mtime: Date.now(),
      ro,
      ...(o.vid !== undefined ? { vid: o.vid } : h?.node.vid !== undefined ? { vid: h.node.vid } : {}),
    };
  }

  /** Makes `dir` (and its parents the run owns) if absent; a new child counts in its parent. */
  function ensureDir(dir: string): Held {
    const found = held.get(dir);
    if (found) return found;
    const parent = parentOf(dir);
    if (parent !== undefined && owns(parent)) ensureDir(parent);
    const node: DirNode = { ...meta(dir, undefined, {}, "index"), kind: "index", count: 0 };
    const h: Held = { node, ver: 1, n: 0, seq: 0 };
    keep(dir, h);
    if (parent !== undefined) countChild(parent, 1);
    return h;
  }

  function countChild(dir: string, by: number): void {
    const d = held.get(dir);
    if (d?.node.kind !== "index") return;
    // a new object: a transaction's undo keeps the old one
    const n = (d.n ?? 0) + by;
    keep(dir, { ...d, n, node: { ...d.node, count: n } });
  }

  function put(key: string, value: TreeValue, o: SetOptions): WriteResult {
    const parent = parentOf(key);
    if (parent !== undefined && owns(parent)) ensureDir(parent);
    const prev = held.get(key);
    judgeSet(key, prev, o, () => prev?.node);
    bump();
    const node = { ...meta(key, prev, o, value.kind), kind: value.kind, value } as TreeNode;
    keep(key, { node, ver: node.version, ...(node.ro ? { ro: 1 as const } : {}) });
    if (!prev && parent !== undefined) countChild(parent, 1);
    return { key, rev, version: node.version };
  }

  function set(key: string, value: TreeValue, o: SetOptions = {}): WriteResult {
    parseKey(key);
    if (key.endsWith("/")) throw new TreeError("TREE_INVALID_KEY", `${key} is a directory: set a value key`);
    return put(key, value, o);
  }

  function append(dir: string, value: TreeValue, o: { vid?: string; ro?: boolean } = {}): WriteResult {
    parseDirKey(dir);
    let n = ensureDir(dir).seq ?? 0;
    while (held.has(`${dir}${n}`)) n++;
    const res = put(`${dir}${n}`, value, {
      create: true,
      ro: o.ro ?? false,
      ...(o.vid ? { vid: o.vid } : {}),
    });
    keep(dir, { ...(held.get(dir) as Held), seq: n + 1 });
    return res;
  }

  function del(key: string, o: DelOptions = {}) {
    parseKey(key);
    const prev = held.get(key);
    if (!judgeDel(key, prev, o, () => prev?.node)) return { key, rev, version: 0, deleted: false };
    drop(key);
    bump();
    const parent = parentOf(key);
    if (parent !== undefined) countChild(parent, -1);
    return { key, rev, version: 0, deleted: true };
  }

  function runOp(op: TxnOp): WriteResult | TreeNode | null {
    switch (op.op) {
      case "set":
        return set(op.key, op.value, op);
      case "append":
        return append(op.key, op.value, op);
      case "del":
        return del(op.key, op);
      case "get":
        parseKey(op.key);
        return held.get(op.key)?.node ?? null;
      default:
        throw unsupported(`a ${op.op} in a transaction`);
    }
  }

  /** All or nothing: on a failing operation, the store is put back as it was. */
  function txn(request: TxnRequest) {
    checkTxnSize(request);
    const ok = (request.compare ?? []).every((c) => {
      parseKey(c.key);
      const node = held.get(c.key)?.node;
      return compareHolds(
        c,
        node && {
          kind: node.kind,
          ...(node.kind !== "index" ? { value: valueToJson(node.value) } : {}),
          version: node.version,
          createRev: node.createRev,
          modRev: node.modRev,
        },
      );
    });
    const revBefore = rev;
    const undone = new Map<string, Held | undefined>();
    undo = undone;
    txnRev = 0;
    try {
      const results = (ok ? (request.success ?? []) : (request.failure ?? [])).map(runOp);
      return { succeeded: ok, rev, results };
    } catch (err) {
      for (const [k, h] of undone) {
        if (h) held.set(k, h);
        else held.delete(k);
      }
      rev = revBefore;
      throw err;
    } finally {
      undo = undefined;
      txnRev = undefined;
    }
  }

  function list(dir: string, o: Parameters<Tree["list"]>[1] = {}) {
    parseDirKey(dir);
    const limit = listLimit(o);
    if (!held.has(dir)) throw new TreeError("TREE_NOT_FOUND", `no directory ${dir}`, { key: dir });
    const names: Array<[string, TreeNode]> = [];
    for (const [key, h] of held) {
      if (key === dir || !key.startsWith(dir) || parentOf(key) !== dir) continue;
      const name = nameOf(key);
      if (!o.system && isSystemName(name)) continue;
      names.push([name, h.node]);
    }
    names.sort((a, b) => compareNames(a[0], b[0]));
    const start = o.after === undefined ? 0 : names.findIndex(([n]) => compareNames(n, o.after!) > 0);
    const page = start < 0 ? [] : names.slice(start, start + limit);
    const children = page.map(([name, node]): ListChild => {
      if (node.kind === "index" || o.values !== false) return { ...node, name } as ListChild;
      const { value: _v, ...rest } = node;
      return { ...rest, name };
    });
    const more = start >= 0 && start + limit < names.length;
    return { key: dir, children, ...(more ? { next: page.at(-1)![0] } : {}) };
  }

  const guard =
    <A extends unknown[], R>(f: (...a: A) => R) =>
    async (...a: A): Promise<R> => {
      check();
      return f(...a);
    };

  return {
    get: guard((key: string) => {
      parseKey(key);
      return held.get(key)?.node;
    }),
    set: guard(set),
    del: guard(del),
    append: guard(append),
    txn: guard(txn),
    list: guard(list),
    mkindex: guard((dir: string) => {
      parseDirKey(dir);
      const d = ensureDir(dir);
      return { key: dir, rev, version: d.ver };
    }),
    deltree: async () => {
      throw unsupported("deltree");
    },
    watch: () => {
      throw unsupported("watch");
    },
    history: async () => [],
    export: () => {
      throw unsupported("export");
    },
    import: async () => {
      throw unsupported("import");
    },
    clear: async () => {
      throw unsupported("clear");
    },
    revision: () => rev,
    compactedRev: () => 0,
    async close() {
      closed = true;
      held.clear();
    },
  };
}

function unsupported(what: string): TreeError {
  return new TreeError(
    "TREE_UNAVAILABLE",
    `a recorded replay's scratch store has no ${what}: replay with --live-tools, or save the replay, to run on a full tree`,
  );
}
