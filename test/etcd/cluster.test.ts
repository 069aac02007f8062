import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TreeError } from "../../tree/errors.js";
import { connectEtcd, createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { int64 } from "../../tree/value.js";
import { type EtcdCluster, type EtcdMember, startEtcdCluster } from "./etcd-process.js";

let cluster: EtcdCluster;

beforeAll(async () => {
  cluster = await startEtcdCluster(3);
}, 90_000);

afterAll(async () => {
  await cluster?.remove();
});

/** The member that leads the cluster now, asked of a member that is up. */
async function leaderOf(members: EtcdMember[]): Promise<EtcdMember> {
  const client = connectEtcd({ endpoints: [members[0]!.clientUrl] });
  try {
    const status = await client.maintenance.status({});
    const ids = await client.cluster.memberList({});
    const leader = ids.members.find((m) => m.ID === status.leader);
    const found = members.find((m) => leader?.clientURLs.includes(m.clientUrl));
    if (!found) throw new Error("no leader found");
    return found;
  } finally {
    client.close();
  }
}

describe("a three-member etcd cluster", () => {
  it("loses no acknowledged write when the leader is killed under write load", async () => {
    const tree: Tree = await createEtcdTree({
      endpoints: cluster.endpoints,
      prefix: "load/",
      unavailableAfterMs: 10_000,
    });
    const acked = new Map<string, bigint>();
    const appended: string[] = [];
    let failed = 0;
    let phase: "before" | "after" | "done" = "before";
    let afterKill = 0;
    const writer = async (w: number) => {
      for (let i = 0; phase !== "done"; i++) {
        const key = `/load/w${w}/k${i % 50}`;
        const value = BigInt(w * 1_000_000 + i);
        try {
          if (i % 5 === 4) appended.push((await tree.append(`/load/q/`, int64(value))).key);
          else {
            await tree.set(key, int64(value));
            acked.set(key, value);
          }
          if (phase === "after") afterKill++;
        } catch (err) {
          // Not acknowledged: the writer was told so; nothing to check for it.
          if (!(err instanceof TreeError) || err.code !== "TREE_UNAVAILABLE") throw err;
          failed++;
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_v, w) => writer(w));
    while (acked.size < 100) await new Promise((r) => setTimeout(r, 20));
    const leader = await leaderOf(cluster.members);
    await leader.stop("SIGKILL");
    phase = "after";
    while (afterKill < 200) await new Promise((r) => setTimeout(r, 20));
    phase = "done";
    await Promise.all(writers);
    await tree.close();

    // Read everything back through a fresh client on the surviving members.
    const survivors = cluster.members.filter((m) => m !== leader);
    const check = await createEtcdTree({
      endpoints: survivors.map((m) => m.clientUrl.replace("http://", "")),
      prefix: "load/",
    });
    try {
      for (const [key, value] of acked) {
        const node = await check.get(key);
        expect(node, key).toBeDefined();
        // A later write to the same key may have landed unacknowledged: never an older value.
        expect((node as { value: { value: bigint } }).value.value >= value, key).toBe(true);
      }
      for (const key of appended) expect(await check.get(key), key).toBeDefined();
      const q = await check.get("/load/q/");
      expect(q).toMatchObject({ kind: "index" });
      const numbers = appended.map((k) => Number(k.slice("/load/q/".length)));
      expect(new Set(numbers).size).toBe(appended.length);
      expect(Math.max(...numbers)).toBeLessThan((q as { count: number }).count);
    } finally {
      await check.close();
    }
    expect(afterKill).toBeGreaterThanOrEqual(200);
    expect(failed).toBeGreaterThanOrEqual(0);
  }, 120_000);
});
