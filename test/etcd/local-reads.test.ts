import { describe, expect, it } from "vitest";
import { progressFollowsEvents } from "../../tree/etcd/client.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import type { EtcdCluster } from "./etcd-process.js";
import { useTwoTrees } from "./fixtures.js";

// Two servers' trees on one etcd, each with its own client and node cache.
let etcd: EtcdCluster;
let a: Tree;
let b: Tree;

useTwoTrees("local/", (e, x, y) => ([etcd, a, b] = [e, x, y]));

/** How many calls of a gRPC method (Range, Txn) etcd has answered, from its metrics. */
async function etcdCalls(method: "Range" | "Txn"): Promise<number> {
  const text = await (await fetch(`${etcd.members[0]!.clientUrl}/metrics`)).text();
  let n = 0;
  for (const line of text.split("\n"))
    if (line.startsWith("grpc_server_handled_total") && line.includes(`grpc_method="${method}"`))
      n += Number(line.split(" ").pop());
  return n;
}

/** Polls `read` until it answers `want` (bounded); answers how many polls it took. */
async function until(read: () => Promise<unknown>, want: unknown): Promise<unknown> {
  let got: unknown;
  for (let i = 0; i < 100; i++) {
    got = await read();
    if (JSON.stringify(got) === JSON.stringify(want)) return got;
    await new Promise((r) => setTimeout(r, 20));
  }
  return got;
}

describe("reads served locally on etcd", () => {
  it("answers repeated gets of a key from the cache, without asking etcd", async () => {
    await a.set("/hot/k", str("v"));
    await until(async () => (await a.get("/hot/k"))?.version, 1);
    const before = (await etcdCalls("Range")) + (await etcdCalls("Txn"));
    expect(before).toBeGreaterThan(0); // the metrics count what this tree asked
    for (let i = 0; i < 50; i++) expect(await a.get("/hot/k")).toMatchObject({ value: str("v") });
    expect((await etcdCalls("Range")) + (await etcdCalls("Txn")) - before).toBeLessThan(5);
  });

  it("shows a server its own writes on its next read (read-your-writes)", async () => {
    await a.set("/ryw/k", str("0"));
    await a.get("/ryw/k");
    for (let i = 1; i <= 20; i++) {
      const w = await a.set("/ryw/k", str(String(i)));
      expect(await a.get("/ryw/k")).toMatchObject({ value: str(String(i)), modRev: w.rev });
    }
  });

  it("shows another server's write within a watch delay, and at once to a linearizable read", async () => {
    await a.set("/other/k", str("old"));
    await until(async () => (await b.get("/other/k"))?.version, 1);
    const w = await a.set("/other/k", str("new"));
    expect(await b.get("/other/k", { consistency: "linearizable" })).toMatchObject({
      value: str("new"),
      modRev: w.rev,
    });
    expect(await until(async () => (await b.get("/other/k"))?.modRev, w.rev)).toBe(w.rev);
    await a.del("/other/k");
    expect(await until(async () => (await b.get("/other/k")) ?? null, null)).toBeNull();
  });

  it("overwrites a value it wrote without reading etcd first (the commit's compare is the check)", async () => {
    await a.set("/w/k", str("0"));
    const [ranges, txns] = [await etcdCalls("Range"), await etcdCalls("Txn")];
    for (let i = 1; i <= 20; i++) await a.set("/w/k", str(String(i)));
    expect((await etcdCalls("Range")) - ranges).toBe(0);
    expect((await etcdCalls("Txn")) - txns).toBe(20); // the commits alone
    expect(await b.get("/w/k", { consistency: "linearizable" })).toMatchObject({
      value: str("20"),
      version: 21,
    });
  });

  it("overwrites a value it has read, written by another server, without reading etcd first", async () => {
    await b.set("/wr/k", str("from b"));
    expect(await a.get("/wr/k")).toMatchObject({ value: str("from b") });
    const [ranges, txns] = [await etcdCalls("Range"), await etcdCalls("Txn")];
    const res = await a.set("/wr/k", str("from a"));
    expect((await etcdCalls("Range")) - ranges).toBe(0);
    expect((await etcdCalls("Txn")) - txns).toBe(1); // the commit alone
    expect(res.version).toBe(2);
    expect(await b.get("/wr/k", { consistency: "linearizable" })).toMatchObject({
      value: str("from a"),
      version: 2,
    });
  });

  it("counts every version when two servers overwrite one key from their cached records at once", async () => {
    await a.set("/both/k", str("start"));
    await b.set("/both/k", str("b"));
    const writes = Array.from({ length: 40 }, (_v, i) =>
      (i % 2 === 0 ? a : b).set("/both/k", str(String(i))),
    );
    const versions = (await Promise.all(writes)).map((w) => w.version).sort((x, y) => x - y);
    expect(versions).toEqual(Array.from({ length: 40 }, (_v, i) => i + 3));
    expect(await a.get("/both/k", { consistency: "linearizable" })).toMatchObject({ version: 42 });
  });

  it("judges a compare-and-set on what etcd holds, not on a cached record another server changed", async () => {
    for (let i = 0; i < 10; i++) {
      const key = `/cas/k${i}`;
      await a.set(key, str("a")); // A now holds the record (version 1)
      const w = await b.set(key, str("b")); // version 2, which A may not have heard of yet
      expect(await a.set(key, str("c"), { ifVersion: w.version })).toMatchObject({ version: 3 });
      await expect(a.set(key, str("d"), { ifVersion: w.version })).rejects.toMatchObject({
        code: "TREE_VERSION_MISMATCH",
      });
      await b.set(key, str("e"), { ro: true });
      await expect(a.set(key, str("f"))).rejects.toMatchObject({ code: "TREE_READ_ONLY" });
    }
  });

  it("answers a write that changes nothing on what etcd holds, not on a cached record", async () => {
    for (let i = 0; i < 10; i++) {
      const dir = `/gone${i}/`;
      await a.mkindex(dir); // A holds the directory's record
      await b.deltree(dir);
      await a.mkindex(dir); // must make it again, not answer from the record of the removed one
      expect(await b.get(dir, { consistency: "linearizable" })).toMatchObject({ kind: "index" });
    }
  });

  it("keeps directories' counts current in the cache as children come and go", async () => {
    await a.mkindex("/dir/");
    await until(async () => (await b.get("/dir/"))?.kind, "index");
    await a.set("/dir/x", str("x"));
    await a.set("/dir/y", str("y"));
    expect(await until(async () => ((await b.get("/dir/")) as { count?: number })?.count, 2)).toBe(2);
    await b.del("/dir/x");
    expect(await until(async () => ((await a.get("/dir/")) as { count?: number })?.count, 1)).toBe(1);
  });

  it("waits for an event of its own range, not a progress answer, on an etcd whose answers can overtake events", async () => {
    // The etcd the tests run (Debian's 3.4.23) is one of those: a progress answer does not prove
    // that the events before it have arrived, so it must not let the cache answer.
    const version = await (await fetch(`${etcd.members[0]!.clientUrl}/version`)).json();
    expect(progressFollowsEvents((version as { etcdserver: string }).etcdserver)).toBe(false);
    const other = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "elsewhere/" });
    try {
      await a.set("/quiet/k", str("v"));
      await until(async () => (await a.get("/quiet/k"))?.version, 1);
      // Revisions this server learns of that bring no event of its range: a write under another
      // prefix, seen through a linearizable read's answer.
      await other.set("/x", str("x"));
      await a.get("/quiet/k", { consistency: "linearizable" });
      await new Promise((r) => setTimeout(r, 300));
      const before = await etcdCalls("Range");
      for (let i = 0; i < 10; i++) expect(await a.get("/quiet/k")).toMatchObject({ value: str("v") });
      expect((await etcdCalls("Range")) - before).toBeGreaterThanOrEqual(10);
      // An event of its own range carries the feed past them: the cache answers again.
      await a.set("/quiet/j", str("j"));
      await a.get("/quiet/j");
      const after = await etcdCalls("Range");
      for (let i = 0; i < 10; i++) expect(await a.get("/quiet/k")).toMatchObject({ value: str("v") });
      expect((await etcdCalls("Range")) - after).toBeLessThan(3);
    } finally {
      await other.close();
    }
  });

  it("trusts progress answers only from etcd versions that send them behind their events", () => {
    for (const v of ["3.4.23", "3.4.30", "3.5.0", "3.5.12", "3.3.27", "", "unknown"])
      expect(progressFollowsEvents(v), v).toBe(false);
    for (const v of ["3.4.31", "3.4.37", "3.5.13", "3.5.21", "3.6.0", "3.7.1", "4.0.0"])
      expect(progressFollowsEvents(v), v).toBe(true);
  });
});
