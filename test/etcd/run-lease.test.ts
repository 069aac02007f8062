/**
 * On etcd a run's lease is an etcd lease: a hold kept alive by etcd's keep-alive that no other
 * process can take while it lives, that a dead process's stops renewing so it expires by itself,
 * and that a dead process of this machine gives up at once. Nothing of it lands in the tree.
 */
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLeases, holdName, leaseKey, runHeld } from "../../agent/lease.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { agentFailure } from "../agent/helpers.js";
import { silent } from "../tools/helpers.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

let etcd: EtcdCluster;
const open: Tree[] = [];
const tree = async () => {
  const t = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "leases/" });
  open.push(t);
  return t;
};

beforeAll(async () => {
  etcd = await startEtcd();
}, 60_000);
afterAll(async () => {
  for (const t of open) await t.close().catch(() => undefined);
  await etcd?.remove();
});

describe("a run's lease on etcd", () => {
  it("is an etcd lease: held against another process, given back on release, never a tree key", async () => {
    const a = await tree();
    const b = await tree();
    expect(a.leases).toBeDefined();
    const mine = createLeases(a, silent, 2000);
    const theirs = createLeases(b, silent, 2000);
    await mine.acquire("el1");
    expect(await b.leases?.holder(holdName("el1"))).toMatchObject({ host: hostname(), pid: process.pid });
    expect((await agentFailure(theirs.acquire("el1"))).code).toBe("AGENT_RUN_BUSY");
    expect(await theirs.held("el1")).toBe(true);
    expect(await runHeld(b, "el1")).toBe(true);
    expect(await a.get(leaseKey("el1"))).toBeUndefined();
    await mine.release("el1");
    expect(await runHeld(b, "el1")).toBe(false);
    await theirs.acquire("el1");
    await theirs.release("el1");
  });

  it("expires when its process stops renewing it, and another process then takes the run", async () => {
    const dying = await tree();
    const b = await tree();
    await createLeases(dying, silent, 1000).acquire("el2");
    const theirs = createLeases(b, silent, 1000);
    expect((await agentFailure(theirs.acquire("el2"))).code).toBe("AGENT_RUN_BUSY");
    await dying.close(); // its keep-alive stops; nothing revokes the lease
    let taken = false;
    for (let i = 0; i < 100 && !taken; i++) {
      taken = await theirs.acquire("el2").then(
        () => true,
        () => new Promise<boolean>((r) => setTimeout(() => r(false), 100)),
      );
    }
    expect(taken).toBe(true);
    await theirs.release("el2");
  });

  it("held by a process of this machine that is gone, is broken at once", async () => {
    const b = await tree();
    const gone = { host: hostname(), pid: 2 ** 22 + 12345, id: "gone", expires: Date.now() + 60_000 };
    expect(await b.leases?.take(holdName("el3"), gone, 60_000)).toBeDefined();
    expect(await runHeld(b, "el3")).toBe(false);
    const leases = createLeases(b, silent, 60_000);
    await leases.acquire("el3");
    expect(await b.leases?.holder(holdName("el3"))).toMatchObject({ pid: process.pid });
    await leases.release("el3");
  });
});
