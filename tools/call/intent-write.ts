/**
 * A tree write's started record, committed in the write's own transaction. A call whose effect is
 * a write to the tree (side effect `tree`: `tree.set`, `tree.del`) writes to the same store as its
 * records: committed together, its record costs the call no commit of its own, and no crash can
 * leave one without the other. A call with no record never started (a resumed run runs it); a
 * started one whose keys hold what it intended is done (agent/resume.ts).
 */
import { isTreeError } from "../../tree/errors.js";
import type { DelResult, Tree, TxnOp, TxnRequest, WriteResult } from "../../tree/types.js";

/** What the tree a call writes through needs of the call's started record. */
export interface CarriedRecord {
  /** The record's write (`small`: its smallest form, when the whole one is too large for the store). */
  op(small: boolean): TxnOp;
  /** Right before the write that carries it (the failpoint of a process dying before its effect). */
  before(): void;
  /** The record is committed, at `key`. */
  landed(key: string): void;
  /**
   * A write this tree cannot join to the record (a deltree, an import…): the record is stored on
   * its own first, as for any other call; rejects when it cannot be, and the write is not made.
   */
  alone(): Promise<void>;
}

/**
 * `tree`, where the call's first write carries its started record: a `set` or `del` becomes one
 * transaction of the record's write and its own (with its `ifVersion`, so it fails as it would
 * alone, and then neither is stored); a `txn` gets the record's write at the head of both its
 * branches. Any other write first stores the record alone. Once the record is in, writes go
 * straight to the tree; reads always do.
 */
export function carryingRecord(tree: Tree, record: CarriedRecord): Tree {
  let landed = false;
  let inFlight: Promise<unknown> | undefined;

  /** `plain` once the record is in; else `carried` (the record's op, its results' own), one at a time. */
  async function write<T>(
    plain: () => Promise<T>,
    carried?: (op: TxnOp) => Promise<[WriteResult, T]>,
  ): Promise<T> {
    while (inFlight) await inFlight.catch(() => {});
    if (landed) return plain();
    const attempt = carried ? commitWith(carried) : record.alone().then(() => undefined);
    inFlight = attempt;
    try {
      const written = await attempt;
      landed = true;
      if (written) return written;
      return plain();
    } finally {
      inFlight = undefined;
    }
  }

  /** The write with the record; again with its small form when the store refuses it as too large. */
  async function commitWith<T>(carried: (op: TxnOp) => Promise<[WriteResult, T]>): Promise<T> {
    record.before();
    let out: [WriteResult, T];
    try {
      out = await carried(record.op(false));
    } catch (err) {
      // too large: the record (its arguments: a huge value) or the write itself; the small record tells
      if (!isTreeError(err, "TREE_VALUE_TOO_LARGE")) throw err;
      out = await carried(record.op(true));
    }
    record.landed(out[0].key);
    return out[1];
  }

  const carriedTxn = async (req: TxnRequest, op: TxnOp) => {
    const r = await tree.txn({
      ...req,
      success: [op, ...(req.success ?? [])],
      failure: [op, ...(req.failure ?? [])],
    });
    const [head, ...results] = r.results;
    return [head as WriteResult, { ...r, results }] as [WriteResult, typeof r];
  };
  const single = async <R extends WriteResult>(effect: TxnOp, op: TxnOp) => {
    const r = await tree.txn({ success: [op, effect] });
    return [r.results[0] as WriteResult, r.results[1] as R] as [WriteResult, R];
  };

  return new Proxy(tree, {
    get(target, prop) {
      switch (prop) {
        case "set":
          return (...[key, value, o = {}]: Parameters<Tree["set"]>) => {
            const plain = () => target.set(key, value, o);
            // create-only has no transaction form: the record goes first
            if (o.create) return write(plain);
            const { create: _c, deferSync: _d, ...flags } = o;
            return write(plain, (op) => single<WriteResult>({ op: "set", key, value, ...flags }, op));
          };
        case "del":
          return (...[key, o = {}]: Parameters<Tree["del"]>) =>
            write(
              () => target.del(key, o),
              (op) => single<DelResult>({ op: "del", key, ...o }, op),
            );
        case "txn":
          return (req: TxnRequest) =>
            write(
              () => target.txn(req),
              (op) => carriedTxn(req, op),
            );
        case "deltree":
        case "mkindex":
        case "append":
        case "import":
          return (...args: unknown[]) =>
            write(() =>
              (Reflect.get(target, prop, target) as (...a: unknown[]) => Promise<unknown>).apply(
                target,
                args,
              ),
            );
        default: {
          // called on the tree itself, not on this proxy: a tree may keep private state on `this`
          const member = Reflect.get(target, prop, target);
          return typeof member === "function" ? member.bind(target) : member;
        }
      }
    },
  });
}
