/**
 * Group commit on etcd: the writes of this server that are ready while a commit is on its way go
 * to etcd together, as one transaction holding each write as a nested transaction with its own
 * compares. etcd judges every nested transaction on the store as it was before the batch, applies
 * the ones whose compares hold, and answers each one's outcome: a write that conflicts fails
 * alone and retries, as it would have on its own. One round trip and one raft entry carry many
 * writes, so writes to different keys share a revision (the watch delivers its events together).
 *
 * Writes in one batch never touch a key another one writes (etcd refuses a key put twice, and a
 * compare judged before the batch must not miss a change made in it); a write that scans or
 * deletes a range goes alone. If etcd refuses a batch (too large, too many operations) every
 * write in it is sent again on its own, so a refusal reaches only the write that caused it.
 */
import type { BuiltTxn } from "./attempt.js";
import { isEtcdRefusal } from "./client.js";
import type { EtcdRpc } from "./rpc.js";
import { byteLength, type RequestOp, type TxnResponse } from "./wire.js";

/** The outcome of one write's transaction: whether its compares held, and the revision etcd answered at. */
export interface Committed {
  succeeded: boolean;
  rev: number;
}

export interface GroupCommitOptions {
  rpc: EtcdRpc;
  /** etcd's --max-txn-ops: a batch of b writes leaves each nested transaction maxTxnOps - b. */
  maxTxnOps: number;
  /** Most bytes of keys and values in one batch (well under etcd's --max-request-bytes). */
  maxBatchBytes?: number;
  /** Batches on their way to etcd at once (the next one forms while they are). */
  inflight?: number;
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
  const maxInflight = o.inflight ?? 1;
  const queue: Waiting[] = [];
  let inflight = 0;

  async function alone(txn: BuiltTxn): Promise<Committed> {
    const res = await o.rpc.txn({ compare: txn.compare, success: txn.success });
    return { succeeded: res.succeeded, rev: res.header.revision };
  }

  /** The first waiting write and every later one that fits beside it, taken off the queue. */
  function take(): Waiting[] {
    const first = queue.shift()!;
    const batch = [first];
    if (!first.txn.touched) return batch;
    const written = new Set(first.txn.touched.writes);
    const read = new Set(first.txn.touched.reads);
    let bytes = first.bytes;
    let widest = first.ops;
    for (let i = 0; i < queue.length; ) {
      const w = queue[i]!;
      const t = w.txn.touched;
      const fits =
        t !== undefined &&
        bytes + w.bytes <= maxBytes &&
        batch.length + 1 + Math.max(widest, w.ops) <= o.maxTxnOps &&
        !t.writes.some((k) => written.has(k) || read.has(k)) &&
        !t.reads.some((k) => written.has(k));
      if (!fits) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      batch.push(w);
      bytes += w.bytes;
      widest = Math.max(widest, w.ops);
      for (const k of t.writes) written.add(k);
      for (const k of t.reads) read.add(k);
    }
    return batch;
  }

  async function send(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const w = batch[0]!;
      await alone(w.txn).then(w.resolve, w.reject);
      return;
    }
    const success: RequestOp[] = batch.map((w) => ({
      request_txn: { compare: w.txn.compare, success: w.txn.success },
    }));
    let res: TxnResponse;
    try {
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
    while (inflight < maxInflight && queue.length > 0) {
      const batch = take();
      inflight++;
      void send(batch).finally(() => {
        inflight--;
        pump();
      });
    }
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
        pump();
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
