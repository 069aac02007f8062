/**
 * The lease of a run, held by the process running (or resuming) it, so two processes never drive
 * one run. It names its holder (host, pid, a random id of the process) and is free when nobody
 * holds it, or when its holder is a process of this host that no longer exists (a killed process
 * frees it at once for a resume on the same machine). Within one process a run's lease is shared
 * by its turns (a count), as one process's turns were never refused before.
 *
 * Where the store has native leases (etcd: Tree.leases) the run's lease is one: a hold kept alive
 * by etcd's keep-alive, which expires by itself when its process dies (or loses etcd) — whatever
 * the clocks of the machines say. Elsewhere it is the tree key `/vthread/<vid>/‥lease` with an
 * expiry its holder renews, taken and renewed by compare-and-set on the key's version.
 */

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { z } from "zod";
import { keys } from "../shared/keys.js";
import { pidAlive } from "../shared/process.js";
import { isTreeError } from "../tree/errors.js";
import type { Tree, TreeNode } from "../tree/types.js";
import { json } from "../tree/value.js";
import { AgentError } from "./errors.js";

export const leaseKey = keys.runLease;
/** The name of a run's hold on a store with native leases. */
export const holdName = (vid: string): string => `run/${vid}`;

/** How long a lease lasts without renewal; renewed every third of it. */
export const LEASE_MS = 15_000;

const LeaseDoc = z.object({
  host: z.string(),
  pid: z.number().int(),
  id: z.string(),
  expires: z.number(),
});
export type LeaseDoc = z.infer<typeof LeaseDoc>;

export interface Leases {
  /** Takes the run's lease (or shares this process's); throws AGENT_RUN_BUSY when another live process holds it. */
  acquire(vid: string): Promise<void>;
  /** Gives it back (the last of this process's turns on the run). */
  release(vid: string): Promise<void>;
  /** Whether a live process (this one included) holds the run's lease. */
  held(vid: string): Promise<boolean>;
}

const PROCESS_ID = randomBytes(6).toString("hex");

/** The lease a node holds, or undefined (absent, or not a lease). */
export function readLease(node: TreeNode | undefined): LeaseDoc | undefined {
  if (node?.kind !== "json") return undefined;
  return leaseDoc(node.value.value);
}

function leaseDoc(value: unknown): LeaseDoc | undefined {
  const parsed = LeaseDoc.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** A lease doc some live process holds (this one included). */
export function leaseLive(doc: LeaseDoc | undefined, now = Date.now()): boolean {
  if (!doc || doc.expires <= now) return false;
  if (doc.id === PROCESS_ID) return true;
  return doc.host !== hostname() || pidAlive(doc.pid);
}

/** A native hold's holder that is known gone: a process of this machine that no longer exists. */
function holderGone(doc: LeaseDoc | undefined): boolean {
  return doc !== undefined && doc.host === hostname() && !pidAlive(doc.pid);
}

/** Whether a live process holds run `vid`'s lease, read from the store (native hold or tree key). */
export async function runHeld(tree: Tree, vid: string): Promise<boolean> {
  if (tree.leases) {
    const holder = await tree.leases.holder(holdName(vid));
    return holder !== undefined && !holderGone(leaseDoc(holder));
  }
  return leaseLive(readLease(await tree.get(leaseKey(vid))));
}

function busy(vid: string, doc: LeaseDoc | undefined): AgentError {
  return new AgentError(
    "AGENT_RUN_BUSY",
    `run ${vid} is being run by another process (pid ${doc?.pid} on ${doc?.host}); wait for it to end, or stop it first`,
    { vid },
  );
}

export function createLeases(tree: Tree, logger: Logger, ttlMs = LEASE_MS): Leases {
  const mine = new Map<string, { count: number; release(): Promise<void> }>();
  const me = () => ({ host: hostname(), pid: process.pid, id: PROCESS_ID, expires: Date.now() + ttlMs });
  const native = tree.leases;

  /** A native hold: taken, or broken first when its holder is a dead process of this machine. */
  async function acquireNative(vid: string, leases: NonNullable<Tree["leases"]>): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const hold = await leases.take(holdName(vid), me(), ttlMs);
      if (hold) {
        mine.set(vid, {
          count: 1,
          release: () =>
            hold.release().catch((err: unknown) => {
              logger.warn({ err, vid }, "cannot release the run's lease");
            }),
        });
        return;
      }
      const holder = await leases.holder(holdName(vid));
      if (holder === undefined) continue; // released meanwhile
      const doc = leaseDoc(holder);
      if (!holderGone(doc)) throw busy(vid, doc);
      await leases.breakHold(holdName(vid), holder);
    }
    throw new AgentError("AGENT_RUN_BUSY", `run ${vid} is being taken by another process; try again`, {
      vid,
    });
  }

  /** The tree key, renewed every third of its time. */
  async function acquireKey(vid: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const node = await tree.get(leaseKey(vid));
      const doc = readLease(node);
      if (leaseLive(doc) && doc?.id !== PROCESS_ID) throw busy(vid, doc);
      try {
        const ifVersion = node && node.kind !== "index" ? node.version : 0;
        const res = await tree.set(leaseKey(vid), json(me()), { ifVersion });
        let version = res.version;
        const renew = async () => {
          try {
            version = (await tree.set(leaseKey(vid), json(me()), { ifVersion: version })).version;
          } catch (err) {
            logger.warn({ err, vid }, "cannot renew the run's lease");
          }
        };
        const timer = setInterval(() => void renew(), Math.max(50, Math.floor(ttlMs / 3)));
        timer.unref();
        mine.set(vid, {
          count: 1,
          async release() {
            clearInterval(timer);
            await tree.del(leaseKey(vid), { ifVersion: version }).catch((err: unknown) => {
              logger.warn({ err, vid }, "cannot release the run's lease");
            });
          },
        });
        return;
      } catch (err) {
        if (!isTreeError(err, "TREE_VERSION_MISMATCH")) throw err;
      }
    }
    throw new AgentError("AGENT_RUN_BUSY", `run ${vid} is being taken by another process; try again`, {
      vid,
    });
  }

  return {
    async acquire(vid) {
      const held = mine.get(vid);
      if (held) {
        held.count++;
        return;
      }
      await (native ? acquireNative(vid, native) : acquireKey(vid));
    },
    async release(vid) {
      const held = mine.get(vid);
      if (!held) return;
      if (--held.count > 0) return;
      mine.delete(vid);
      await held.release();
    },
    async held(vid) {
      if (mine.has(vid)) return true;
      return runHeld(tree, vid);
    },
  };
}
