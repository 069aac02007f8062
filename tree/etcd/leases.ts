/**
 * Holds on etcd's own leases (Tree.leases): a hold is the key `<prefix>R<name>` put with a lease
 * that etcd3 keeps alive while this process lives. A process that dies stops the keep-alive, the
 * lease expires after its TTL and etcd deletes the key, so another process may take the hold; no
 * clock of ours decides it. The key lies outside the node, history and format keys of the tree's
 * layout (layout.ts), so the tree's reads and its watch never see it.
 */
import type { Etcd3, Lease } from "etcd3";
import type { Logger } from "pino";
import type { StoreHold, StoreLeases } from "../types.js";

export const HOLD_SK = "R";

/**
 * `stop()` (the tree's close) stops renewing every hold still taken, without revoking: they expire
 * as a dead process's would, and no keep-alive outlives the tree.
 */
export function createEtcdLeases(
  client: Etcd3,
  prefix: string,
  logger?: Logger,
): StoreLeases & { stop(): void } {
  const keyOf = (name: string) => Buffer.from(`${prefix}${HOLD_SK}${name}`, "utf8");
  const live = new Set<Lease>();
  return {
    stop() {
      for (const lease of live) lease.release();
      live.clear();
    },
    async take(name, holder, ttlMs) {
      // etcd's TTLs are whole seconds; its minimum may be higher (it then grants its minimum)
      const lease: Lease = client.lease(Math.max(1, Math.ceil(ttlMs / 1000)), { autoKeepAlive: true });
      let lost = false;
      lease.on("lost", (err) => {
        lost = true;
        logger?.warn({ err, hold: name }, "the etcd lease of a hold is lost");
      });
      try {
        const id = await lease.grant();
        const res = await client
          .if(keyOf(name), "Create", "==", 0)
          .then(client.put(keyOf(name)).value(JSON.stringify(holder)).lease(id))
          .commit();
        if (!res.succeeded) {
          await lease.revoke();
          return undefined;
        }
      } catch (err) {
        await lease.revoke().catch(() => undefined);
        throw err;
      }
      live.add(lease);
      const hold: StoreHold = {
        // revoking the lease deletes the key with it
        release: () => {
          live.delete(lease);
          return lease.revoke();
        },
        lost: () => lost || lease.revoked(),
      };
      return hold;
    },
    async breakHold(name, holder) {
      const res = await client
        .if(keyOf(name), "Value", "==", JSON.stringify(holder))
        .then(client.delete().key(keyOf(name)))
        .commit();
      return res.succeeded;
    },
    async holder(name) {
      const text = await client.get(keyOf(name)).string();
      if (text === null) return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    },
  };
}
