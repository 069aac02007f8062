import type { Etcd3 } from "etcd3";
import { describe, expect, it } from "vitest";
import { nodeKey } from "../../tree/encoding.js";
import { isTreeError } from "../../tree/errors.js";
import { Attempt } from "../../tree/etcd/attempt.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import { EtcdRpc } from "../../tree/etcd/rpc.js";
import { historyRule } from "../../tree/history-limit.js";
import { createPlanner } from "../../tree/plan.js";
import type { Tree, WatchBatch } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import type { EtcdCluster } from "./etcd-process.js";
import { useEtcdClient } from "./fixtures.js";

let etcd: EtcdCluster;
let client: Etcd3;
let n = 0;

useEtcdClient((e, c) => ([etcd, client] = [e, c]));

const open = (prefix: string): Promise<Tree> => createEtcdTree({ endpoints: etcd.endpoints, client, prefix });

/** The tree keys (storage keys under `prefix`) that etcd last wrote at `rev`. */
async function keysWrittenAt(prefix: string, rev: number): Promise<string[]> {
  const res = await client.getAll().prefix(prefix).exec();
  return res.kvs
    .filter((kv) => Number(kv.mod_revision) === rev)
    .map((kv) => kv.key.toString("utf8").slice(prefix.length))
    .sort();
}

describe("the etcd layout", () => {
  it("writes only the keys a write changes: the value alone for an overwrite, and no change-log key", async () => {
    const prefix = `touch${++n}/`;
    const tree = await open(prefix);
    try {
      await tree.set("/d/a", str("one"));
      const overwrite = await tree.set("/d/a", str("two"));
      expect(await keysWrittenAt(prefix, overwrite.rev)).toEqual([nodeKey("/d/a")]);
      const created = await tree.set("/d/b", str("new"));
      expect(await keysWrittenAt(prefix, created.rev)).toEqual([nodeKey("/d/"), nodeKey("/d/b")].sort());
      await tree.mkindex("/q/");
      const appended = await tree.append("/q/", str("x"));
      const queue = await keysWrittenAt(prefix, appended.rev);
      expect(queue).toEqual([nodeKey("/q/"), nodeKey("/q/0")].sort()); // the child, and the count and sequence
      expect(await client.get(`${prefix}L`).exists()).toBe(false);
    } finally {
      await tree.close();
    }
  });

  it("lets writes to different keys commit whatever committed in between; a new key conflicts only on its directory", async () => {
    const prefix = `conflict${++n}/`;
    const tree = await open(prefix);
    const plan = createPlanner({ history: historyRule(0), maxValueBytes: 1 << 20 });
    try {
      await tree.set("/d/a", str("a0"));
      await tree.set("/d/c", str("c0"));
      // Two writes prepared against the same snapshot, committed after other writes land.
      const overwrite = new Attempt(new EtcdRpc({ endpoints: etcd.endpoints }), prefix, () => {});
      await overwrite.plan((s) => plan.set(s, "/d/a", str("a1")));
      const create = new Attempt(new EtcdRpc({ endpoints: etcd.endpoints }), prefix, () => {});
      await create.plan((s) => plan.set(s, "/d/new", str("n")));
      await tree.set("/d/c", str("c1")); // another key overwritten
      await tree.set("/d/b", str("b0")); // a sibling created: /d/'s count moves
      const commit = async (m: Attempt) => {
        const txn = m.build("test", 128, (e) => e);
        return (
          await new EtcdRpc({ endpoints: etcd.endpoints }).txn({ compare: txn.compare, success: txn.success })
        ).succeeded;
      };
      expect(await commit(overwrite)).toBe(true);
      expect(await commit(create)).toBe(false);
      expect(await tree.get("/d/a")).toMatchObject({ value: str("a1"), version: 2 });
      expect(await tree.get("/d/")).toMatchObject({ count: 3 });
      // And an overwrite prepared before its own key changed does conflict.
      const stale = new Attempt(new EtcdRpc({ endpoints: etcd.endpoints }), prefix, () => {});
      await stale.plan((s) => plan.set(s, "/d/a", str("stale")));
      await tree.set("/d/a", str("a2"));
      expect(await commit(stale)).toBe(false);
      // A key deleted since it was read: the overwrite must not bring it back.
      const late = new Attempt(new EtcdRpc({ endpoints: etcd.endpoints }), prefix, () => {});
      await late.plan((s) => plan.set(s, "/d/c", str("late")));
      await tree.del("/d/c");
      expect(await commit(late)).toBe(false);
      expect(await tree.get("/d/c")).toBeUndefined();
    } finally {
      await tree.close();
    }
  });

  it("serves watches from etcd's own watch: deletes, deltrees and txns as the tree's events", async () => {
    const prefix = `feed${++n}/`;
    const a = await open(prefix);
    const b = await open(prefix);
    try {
      const r0 = a.revision();
      const w1 = await a.set("/f/x", str("1"));
      const w2 = await a.set("/f/x", str("2"));
      const w3 = await b.del("/f/x");
      const w4 = await b.txn({
        success: [
          { op: "set", key: "/f/y", value: str("y") },
          { op: "set", key: "/f/y", value: str("y2") },
        ],
      });
      const w5 = await a.deltree("/f/");
      const batches: WatchBatch[] = [];
      for await (const batch of b.watch("/f/", { fromRev: r0 + 1 })) {
        batches.push(batch);
        if (batch.rev >= w5.rev) break;
      }
      expect(batches.map((x) => [x.rev, x.events.map((e) => [e.type, e.key, e.prevRev, e.version])])).toEqual(
        [
          [
            w1.rev,
            [
              ["put", "/f/", 0, 1],
              ["put", "/f/x", 0, 1],
            ],
          ],
          [w2.rev, [["put", "/f/x", w1.rev, 2]]],
          [w3.rev, [["delete", "/f/x", w2.rev, undefined]]],
          [
            w4.rev,
            [
              ["put", "/f/y", 0, 1],
              ["put", "/f/y", w4.rev, 2],
            ],
          ],
          [w5.rev, [["deltree", "/f/", w1.rev, undefined]]],
        ],
      );
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("a tree written in the older layout (with a change-log key)", () => {
  it("is upgraded when it opens: values and history read as they were, the log key gone, older revisions compacted", async () => {
    const prefix = `old${++n}/`;
    // What the previous version wrote: the same node and history records, plus <prefix>L.
    const put = (sk: string, value: unknown) => client.put(prefix + sk).value(JSON.stringify(value));
    await put(nodeKey("/"), { k: "index", ver: 1, mt: 1, n: 1, s: 0 });
    await put(nodeKey("/byteseek/"), { k: "index", ver: 1, mt: 1, n: 1, s: 0 });
    await put("L", {
      id: "a.0",
      ev: [{ t: "put", key: "/byteseek/p", k: "char/utf8", v: "v1", p: 0, ver: 1 }],
    });
    const v1 = Number(
      (
        await client
          .put(prefix + nodeKey("/byteseek/p"))
          .value(JSON.stringify({ k: "char/utf8", v: "v1", ver: 1, mt: 1 }))
      ).header.revision,
    );
    await put(`h/byteseek/p\0${String(v1).padStart(16, "0")}`, {
      k: "char/utf8",
      v: "v1",
      ver: 1,
      mr: v1,
      mt: 1,
    });
    await put(nodeKey("/byteseek/p"), { k: "char/utf8", v: "v2", ver: 2, mt: 2, h: [v1] });
    await put("L", {
      id: "b.0",
      ev: [{ t: "put", key: "/byteseek/p", k: "char/utf8", v: "v2", p: v1, ver: 2 }],
    });

    const [a, b] = await Promise.all([open(prefix), open(prefix)]);
    try {
      expect(await client.get(`${prefix}L`).exists()).toBe(false);
      const upgradedAt = Number((await client.get(`${prefix}F`).exec()).kvs[0]?.create_revision);
      expect(upgradedAt).toBeGreaterThan(v1);
      expect(await a.get("/byteseek/p")).toMatchObject({ value: str("v2"), version: 2 });
      expect(await b.history("/byteseek/p")).toEqual([
        expect.objectContaining({ value: str("v1"), version: 1, modRev: v1 }),
      ]);
      const before = (await a.get("/byteseek/p"))?.modRev;
      const w = await b.set("/byteseek/p", str("v3"));
      expect(await a.get("/byteseek/p", { consistency: "linearizable" })).toMatchObject({
        value: str("v3"),
        version: 3,
        modRev: w.rev,
      });
      const err = await (async () => {
        try {
          for await (const _ of a.watch("/", { fromRev: v1 })) break;
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(isTreeError(err, "TREE_COMPACTED")).toBe(true);
      expect(a.compactedRev()).toBeGreaterThanOrEqual(upgradedAt);
      for await (const batch of a.watch("/byteseek/", { fromRev: upgradedAt })) {
        expect(batch.events).toEqual([
          expect.objectContaining({ type: "put", key: "/byteseek/p", prevRev: before, version: 3 }),
        ]);
        break;
      }
      // Opened again: nothing more to upgrade.
      const again = await open(prefix);
      await again.close();
      expect(Number((await client.get(`${prefix}F`).exec()).kvs[0]?.create_revision)).toBe(upgradedAt);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
