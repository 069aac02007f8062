/**
 * Keeps etcd's history to about `retain` revisions: after a commit at `rev`, compacts etcd (for
 * every prefix on it: etcd's compaction is cluster-wide) once `retain / 10` more revisions went by.
 */
import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import { isCompactedError } from "./client.js";
import type { EtcdTreeState } from "./tree-state.js";

/** Compacts when due after a commit at `rev`; the writes of one batch share one call. */
export type CompactIfDue = (rev: number) => Promise<void> | undefined;

export function createCompaction(o: {
  client: Etcd3;
  state: EtcdTreeState;
  retain: number;
  logger?: Logger | undefined;
}): CompactIfDue {
  const { client, state, retain, logger } = o;
  const step = Math.max(1, Math.floor(retain / 10));
  let compacting: Promise<void> | undefined;
  return function compactIfDue(rev) {
    const target = rev - retain + 1;
    if (target - state.compacted < step) return undefined;
    compacting ??= (async () => {
      try {
        await client.kv.compact({ revision: target });
      } catch (err) {
        // Another process compacted further already: fine. Anything else waits for the next write.
        if (!isCompactedError(err)) {
          logger?.warn({ err }, "etcd compaction failed");
          return;
        }
      }
      state.seeCompacted(target);
    })().finally(() => {
      compacting = undefined;
    });
    return compacting;
  };
}
