/**
 * Group commit on etcd: the writes of this server that are ready while a commit is on its way go
 * to etcd together, as one transaction holding each write as a nested transaction with its own
 * compares. etcd judges every nested transaction on the store as it was before the batch, applies
 * the ones whose compares hold, and answers each one's outcome: a write that conflicts fails
 * alone and retries, as it would have on its own. One round trip and one raft entry carry many
 * writes, so writes to different keys share a revision (the watch delivers its events together).
 *
 * A batch goes flat first: every write's compares and operations in one plain transaction, which
 * costs etcd and this server less than nested ones (no per-write transaction to judge, encode and
 * answer). When all its compares hold, which is nearly always, every write in it succeeded, as it
 * would have nested. When one fails, nothing was applied and the batch goes again nested, so only
 * the writes that conflict fail; the next batches go nested straight away for a while, so a run
 * of conflicts costs one round trip each, not two.
 *
 * Writes in one batch never touch a key another one writes (etcd refuses a key put twice, and a
 * compare judged before the batch must not miss a change made in it); a write that scans or
 * deletes a range goes alone. If etcd refuses a batch (too large, too many operations) every
 * write in it is sent again on its own, so a refusal reaches only the write that caused it.
 *
 * When batches go: a batch forms from the writes ready once the I/O the event loop has read this
 * turn is handled (so requests parsed together commit together), and goes at once when nothing is
 * on its way. While one batch is, a second goes beside it only when it is at least as large: etcd
 * then takes both in one raft round (one WAL sync) instead of one after the other, yet batches
 * stay as large as the load allows (each transaction costs etcd far more than a write in it).
 * Writes in two batches on their way together are still judged each on its own compares; a
 * second batch touches no key the first writes, and starts with the first waiting write or waits,
 * so a write that must go alone, or that shares a key with hot writes, is never overtaken for ever.
 */
import type { BuiltTxn } from "./attempt.js";
import type { EtcdCalls } from "./calls.js";
import { isEtcdRefusal } from "./client.js";
import { byteLength, type Compare, type RequestOp, type TxnRequest, type TxnResponse } from "./wire.js";

type Touched = NonNullable<BuiltTxn["touched"]>;

/** The outcome of one write's transaction: whether its compares held, and the revision etcd answered at. */
export interface Committed {
  succeeded: boolean;
  rev: number;
}

export interface GroupCommitOptions {
  rpc: EtcdCalls;
  /** etcd's --max-txn-ops: a batch of b writes leaves each nested transaction maxTxnOps - b. */
  maxTxnOps: number;
  /** Most bytes of keys and values in one batch (well under etcd's --max-request-bytes). */
  maxBatchBytes?: number;
  /** Most batches on their way to etcd at once (default 2; see above for when a second goes). */
  inflight?: number;
  /** Batches sent nested, after a flat one met a failed compare, before flat is tried again (default 16). */
  nestedAfterConflict?: number;
}

interface Waiting {
  txn: BuiltTxn;
  ops: number;
  bytes: number;
  resolve(c: Committed): void;
  reject(err: unknown): void;
}

export function createGroupCommit(o: GroupCommitOptions) {
  const maxBytes = o.maxBatchBytes ?? 512 * 1024;
  const maxInflight = o.inflight ?? 2;
  const nestedAfterConflict = o.nestedAfterConflict ?? 16;
  /** Batches still to send nested before trying flat again. */
  let nestedLeft = 0;
  const queue: Waiting[] = [];
  /** Writes in the batch sent last (the bar a batch beside it must reach). */
  let lastSize = 0;
  let scheduled = false;

  async function alone(txn: BuiltTxn): Promise<Committed> {
    const res = await o.rpc.txn({ compare: txn.compare, success: txn.success });
    return { succeeded: res.succeeded, rev: res.header.revision };
  }

  /** The keys a batch on its way reads and writes; `alone`: a write that did not name them. */
  interface Keys {
    written: Set<string>;
    read: Set<string>;
    alone: boolean;
  }
  const flying = new Set<Keys>();

  /** Whether `t` may go beside `keys` (no key written twice, none read and written). */
  const clear = (t: Touched, keys: Keys) =>
    !keys.alone &&
    !t.writes.some((k) => keys.written.has(k) || keys.read.has(k)) &&
    !t.reads.some((k) => keys.written.has(k));

  /** Whether a write names its keys and may go beside every batch on its way. */
  function mayGo(t: Touched | undefined): t is Touched {
    if (t === undefined) return false;
    for (const keys of flying) if (!clear(t, keys)) return false;
    return true;
  }

  /**
   * The first waiting write and every later one that fits beside it, taken off the queue. Beside
   * a batch on its way, only writes that name their keys and touch none it writes may go: empty
   * when the first waiting write may not.
   */
  function take(): { batch: Waiting[]; keys: Keys } {
    const keys: Keys = { written: new Set(), read: new Set(), alone: false };
    // Beside a batch on its way, a batch starts with the first waiting write or not at all: one
    // that must wait (it must go alone, or shares a key) is never overtaken, so it never waits for ever.
    if (flying.size > 0 && !mayGo(queue[0]!.txn.touched)) return { batch: [], keys };
    const first = queue.shift()!;
    if (!first.txn.touched) return { batch: [first], keys: { ...keys, alone: true } };
    const batch: Waiting[] = [];
    let bytes = 0;
    let widest = 0;
    const add = (w: Waiting, t: Touched) => {
      batch.push(w);
      bytes += w.bytes;
      widest = Math.max(widest, w.ops);
      for (const k of t.writes) keys.written.add(k);
      for (const k of t.reads) keys.read.add(k);
    };
    add(first, first.txn.touched);
    for (let i = 0; i < queue.length; ) {
      const w = queue[i]!;
      const t = w.txn.touched;
      const fits =
        mayGo(t) &&
        bytes + w.bytes <= maxBytes &&
        batch.length + 1 + Math.max(widest, w.ops) <= o.maxTxnOps &&
        clear(t, keys);
      if (!fits) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      add(w, t);
    }
    return { batch, keys };
  }

  /** The batch as one plain transaction, when it is within etcd's --max-txn-ops. */
  function flat(batch: Waiting[]): TxnRequest | undefined {
    const compare: Compare[] = [];
    const success: RequestOp[] = [];
    for (const w of batch) {
      compare.push(...w.txn.compare);
      success.push(...w.txn.success);
    }
    return compare.length <= o.maxTxnOps && success.length <= o.maxTxnOps ? { compare, success } : undefined;
  }

  async function send(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const w = batch[0]!;
      await alone(w.txn).then(w.resolve, w.reject);
      return;
    }
    let res: TxnResponse;
    try {
      const plain = nestedLeft === 0 ? flat(batch) : undefined;
      if (nestedLeft > 0) nestedLeft--;
      if (plain) {
        res = await o.rpc.txn(plain);
        if (res.succeeded) {
          for (const w of batch) w.resolve({ succeeded: true, rev: res.header.revision });
          return;
        }
        // A compare failed and nothing was applied: nested, each write is judged on its own.
        nestedLeft = nestedAfterConflict;
      }
      const success: RequestOp[] = batch.map((w) => ({
        request_txn: { compare: w.txn.compare, success: w.txn.success },
      }));
      res = await o.rpc.txn({ success });
    } catch (err) {
      if (!isEtcdRefusal(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      // Nothing was applied: each write on its own, so only the one etcd refuses hears of it.
      await Promise.all(batch.map((w) => alone(w.txn).then(w.resolve, w.reject)));
      return;
    }
    const rev = res.header.revision;
    batch.forEach((w, i) => {
      w.resolve({ succeeded: res.responses[i]?.response_txn?.succeeded === true, rev });
    });
  }

  function pump(): void {
    scheduled = false;
    while (flying.size < maxInflight && queue.length > 0) {
      if (flying.size > 0 && queue.length < lastSize) return;
      const { batch, keys } = take();
      if (batch.length === 0) return;
      flying.add(keys);
      lastSize = batch.length;
      void send(batch).finally(() => {
        flying.delete(keys);
        schedule();
      });
    }
  }

  /** Pumps after the I/O callbacks of this turn of the event loop, once however often asked. */
  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(pump);
  }

  return {
    /** Commits one write's transaction, with whatever else is ready. */
    commit(txn: BuiltTxn): Promise<Committed> {
      return new Promise<Committed>((resolve, reject) => {
        queue.push({
          txn,
          ops: Math.max(txn.compare.length, txn.success.length),
          bytes: sizeOf(txn),
          resolve,
          reject,
        });
        schedule();
      });
    },
  };
}

function sizeOf(txn: BuiltTxn): number {
  let n = 0;
  for (const op of txn.success) {
    n += "request_put" in op ? byteLength(op.request_put.key) + byteLength(op.request_put.value) : 64;
  }
  return n + txn.compare.length * 64;
}
