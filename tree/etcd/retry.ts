/** Retrying while etcd is away: a backoff, and reads retried until TREE_UNAVAILABLE. */
import { isEtcdFailure, isEtcdRefusal, MemberSkipped, treeErrorOf } from "./client.js";
import type { EtcdTreeState } from "./tree-state.js";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The wait before retry `i` (from 0) while etcd is away: 10 ms doubling, at most 500. */
export const backoffMs = (i: number) => Math.min(10 * 2 ** i, 500);

/** Runs a read, retried while etcd is away, then TREE_UNAVAILABLE; `what` names it in that error. */
export type RetriedRead = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

export function createRetriedRead(state: EtcdTreeState, unavailableAfterMs: number): RetriedRead {
  return async function read<T>(what: string, fn: () => Promise<T>): Promise<T> {
    state.ensureOpen();
    const started = Date.now();
    // A member skipped says less than the failure that made it skipped (a refused certificate…).
    let reason: unknown;
    for (let i = 0; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (!isEtcdFailure(err)) throw err;
        if (!(err instanceof MemberSkipped) || reason === undefined) reason = err;
        if (isEtcdRefusal(err) || Date.now() - started >= unavailableAfterMs) throw treeErrorOf(reason, what);
        state.ensureOpen();
        await sleep(backoffMs(i));
      }
    }
  };
}
