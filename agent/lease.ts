/**
 * The lease of a run: `/vthread/<vid>/‥lease`, held by the process running (or resuming) it, so two
 * processes never drive one run. It names its holder (host, pid, a random id of the process) and
 * an expiry the holder renews; it is free when absent, expired, or held by a process of this host
 * that no longer exists (a killed process frees it at once for a resume on the same machine). Taken
 * and renewed by compare-and-set on the key's version, so it works alike on every engine (etcd
 * included: a tree key with an expiry, not an etcd lease). Within one process a run's lease is
 * shared by its turns (a count), as one process's turns were never refused before.
 */
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "pino";
import { z } from "zod";
import { isTreeError } from "../tree/errors.js";
import type { Tree, TreeNode } from "../tree/types.js";
import { json } from "../tree/value.js";
import { AgentError } from "./errors.js";

export const leaseKey = (vid: string): string => `/vthread/${vid}/‥lease`;

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

/** Whether `pid` names a process of this machine (EPERM: it exists, owned by another user). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The lease a node holds, or undefined (absent, or not a lease). */
export function readLease(node: TreeNode | undefined): LeaseDoc | undefined {
  if (node?.kind !== "json") return undefined;
  const parsed = LeaseDoc.safeParse(node.value.value);
  return parsed.success ? parsed.data : undefined;
}

/** A lease doc some live process holds (this one included). */
export function leaseLive(doc: LeaseDoc | undefined, now = Date.now()): boolean {
  if (!doc || doc.expires <= now) return false;
  if (doc.id === PROCESS_ID) return true;
  return doc.host !== hostname() || pidAlive(doc.pid);
}

export function createLeases(tree: Tree, logger: Logger, ttlMs = LEASE_MS): Leases {
  const mine = new Map<string, { count: number; timer: NodeJS.Timeout; version: number }>();
  const me = () => ({ host: hostname(), pid: process.pid, id: PROCESS_ID, expires: Date.now() + ttlMs });

  async function renew(vid: string): Promise<void> {
    const held = mine.get(vid);
    if (!held) return;
    try {
      const res = await tree.set(leaseKey(vid), json(me()), { ifVersion: held.version });
      held.version = res.version;
    } catch (err) {
      logger.warn({ err, vid }, "cannot renew the run's lease");
    }
  }

  return {
    async acquire(vid) {
      const held = mine.get(vid);
      if (held) {
        held.count++;
        return;
      }
      for (let attempt = 0; attempt < 5; attempt++) {
        const node = await tree.get(leaseKey(vid));
        const doc = readLease(node);
        if (leaseLive(doc) && doc?.id !== PROCESS_ID)
          throw new AgentError(
            "AGENT_RUN_BUSY",
            `run ${vid} is being run by another process (pid ${doc?.pid} on ${doc?.host}); wait for it to end, or stop it first`,
            { vid },
          );
        try {
          const ifVersion = node && node.kind !== "index" ? node.version : 0;
          const res = await tree.set(leaseKey(vid), json(me()), { ifVersion });
          const timer = setInterval(() => void renew(vid), Math.max(50, Math.floor(ttlMs / 3)));
          timer.unref();
          mine.set(vid, { count: 1, timer, version: res.version });
          return;
        } catch (err) {
          if (!isTreeError(err, "TREE_VERSION_MISMATCH")) throw err;
        }
      }
      throw new AgentError("AGENT_RUN_BUSY", `run ${vid} is being taken by another process; try again`, {
        vid,
      });
    },
    async release(vid) {
      const held = mine.get(vid);
      if (!held) return;
      if (--held.count > 0) return;
      clearInterval(held.timer);
      mine.delete(vid);
      await tree.del(leaseKey(vid), { ifVersion: held.version }).catch((err: unknown) => {
        logger.warn({ err, vid }, "cannot release the run's lease");
      });
    },
    async held(vid) {
      if (mine.has(vid)) return true;
      return leaseLive(readLease(await tree.get(leaseKey(vid))));
    },
  };
}
