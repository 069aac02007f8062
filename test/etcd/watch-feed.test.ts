/** watch() on etcd shares the tree's one etcd watch (the node cache's feed) among its subscribers. */
import { describe, expect, it } from "vitest";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree, WatchBatch } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import { eventually } from "../server/helpers.js";
import type { EtcdCluster } from "./etcd-process.js";
import { useTwoTrees } from "./fixtures.js";

let etcd: EtcdCluster;
let a: Tree;
let b: Tree;

useTwoTrees("feed/", (e, x, y) => ([etcd, a, b] = [e, x, y]));

/** How many watchers etcd holds (every client's), from its metrics. */
async function watchers(): Promise<number> {
  const text = await (await fetch(`${etcd.members[0]!.clientUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("etcd_debugging_mvcc_watcher_total "));
  if (!line) throw new Error("etcd's metrics hold no etcd_debugging_mvcc_watcher_total");
  return Number(line.split(" ").pop());
}

/** A watch's batches, collected as they come, until `stop`. */
function collect(tree: Tree, prefix: string, fromRev?: number) {
  const ac = new AbortController();
  const batches: WatchBatch[] = [];
  let error: unknown;
  const done = (async () => {
    try {
      for await (const batch of tree.watch(prefix, {
        signal: ac.signal,
        ...(fromRev === undefined ? {} : { fromRev }),
      }))
        batches.push(batch);
    } catch (err) {
      error = err;
    }
  })();
  return {
    batches,
    keys: () => batches.flatMap((x) => x.events.map((e) => e.key)),
    error: () => error,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

describe("watch on etcd, fed by the tree's one etcd watch", () => {
  it("serves two prefixes' watches and the node cache of one tree from a single etcd watcher", async () => {
    await eventually(async () => (await watchers()) === 2, "the node caches' feeds of both trees");
    // Directories first: a value's first write in a new directory also reports the directory.
    for (const d of ["/x/", "/y/", "/z/"]) await b.set(`${d}0`, str("0"));
    const x = collect(a, "/x/");
    const y = collect(a, "/y/");
    try {
      await b.set("/x/1", str("x"));
      await b.set("/y/1", str("y"));
      await b.set("/z/1", str("z"));
      await eventually(() => x.keys().length === 1 && y.keys().length === 1, "both watches' events");
      expect(x.keys()).toEqual(["/x/1"]);
      expect(y.keys()).toEqual(["/y/1"]);
      expect(await watchers()).toBe(2);
    } finally {
      await x.stop();
      await y.stop();
    }
  });

  it("delivers every revision once and in order to a watch from an old revision while writes flow", async () => {
    await a.set("/flow/seed", str("0"));
    const first = await a.set("/flow/0", str("0"));
    const revs = [first.rev];
    for (let i = 1; i <= 40; i++) revs.push((await b.set(`/flow/${i % 7}`, str(String(i)))).rev);
    // Writes go on while the watch replays the old ones and switches to the shared stream.
    let writing = true;
    const writer = (async () => {
      for (let i = 41; writing || i < 80; i++) revs.push((await b.set(`/flow/${i % 7}`, str(String(i)))).rev);
    })();
    const w = collect(a, "/flow/", first.rev);
    try {
      await eventually(() => w.batches.length >= 45, "the replayed revisions");
      writing = false;
      await writer;
      const last = revs[revs.length - 1]!;
      await eventually(() => w.batches.at(-1)?.rev === last, "the last write's revision");
      expect(w.batches.map((x) => x.rev)).toEqual(revs);
      expect(w.batches.every((x) => x.events.length === 1 && x.events[0]!.rev === x.rev)).toBe(true);
      expect(w.error()).toBeUndefined();
      // The catch-up's own watcher is gone: only the two trees' shared ones remain.
      await eventually(async () => (await watchers()) === 2, "the catch-up watcher cancelled");
    } finally {
      writing = false;
      await w.stop();
    }
  });

  it("keeps the other watches and the node cache going when one watch closes", async () => {
    await a.set("/keep/k", str("0"));
    expect(await a.get("/keep/k")).toMatchObject({ value: str("0") });
    const gone = collect(a, "/keep/");
    const stays = collect(a, "/keep/");
    await b.set("/keep/k", str("1"));
    await eventually(() => gone.batches.length === 1 && stays.batches.length === 1, "both watches' event");
    await gone.stop();
    const w = await b.set("/keep/k", str("2"));
    await eventually(() => stays.batches.length === 2, "the remaining watch's event");
    expect(stays.batches[1]!.rev).toBe(w.rev);
    await eventually(async () => (await a.get("/keep/k"))?.modRev === w.rev, "the cache fed b's write");
    expect(await watchers()).toBe(2);
    await stays.stop();
    expect(gone.error()).toBeUndefined();
  });

  it("answers a compacted revision with TREE_COMPACTED", async () => {
    const old = await a.set("/cmp/k", str("0"));
    await a.set("/cmp/k", str("1"));
    const now = await a.set("/cmp/k", str("2"));
    const client = new (await import("etcd3")).Etcd3({ hosts: etcd.endpoints });
    try {
      await client.kv.compact({ revision: now.rev, physical: true });
    } finally {
      client.close();
    }
    const w = collect(a, "/cmp/", old.rev);
    await eventually(() => w.error() !== undefined, "the watch's error");
    expect(w.error()).toMatchObject({ code: "TREE_COMPACTED" });
    await w.stop();
  });

  it("holds an etcd watcher for a tree without a node cache only while it has a watch", async () => {
    const c = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "feed/", cacheBytes: 0 });
    try {
      // Only the two trees' node-cache feeds: none for c yet, and no earlier test's still cancelling.
      await eventually(async () => (await watchers()) === 2, "the node caches' feeds of both trees");
      const w = collect(c, "/nocache/");
      const put = await a.set("/nocache/k", str("v"));
      await eventually(() => w.batches.length === 1, "the watch's event");
      expect(w.batches[0]!.rev).toBe(put.rev);
      // When the write lands before c's stream is live, a catch-up watcher reads it and is then
      // cancelled: etcd counts it until the cancel reaches it, so wait for c's one stream alone.
      await eventually(async () => (await watchers()) === 3, "c's one watcher, any catch-up ended");
      await w.stop();
      await eventually(async () => (await watchers()) === 2, "c's watcher cancelled");
    } finally {
      await c.close();
    }
  });

  it("delivers to a watch without fromRev the writes made after the last revision its server saw", async () => {
    // List, then watch: through a server without a node cache (no stream running until the watch),
    // a write another server made in between must still reach the watch.
    const c = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "feed/", cacheBytes: 0 });
    try {
      await c.list("/");
      const put = await a.set("/between/k", str("v"));
      const w = collect(c, "/between/");
      await eventually(() => w.batches.length === 1, "the write made before the watch");
      expect(w.batches[0]!.rev).toBe(put.rev);
      expect(w.keys()).toEqual(["/between/", "/between/k"]); // its directory made with it
      await w.stop();
    } finally {
      await c.close();
    }
  });
});
