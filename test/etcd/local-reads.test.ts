import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

// Two servers' trees on one etcd, each with its own client and node cache.
let etcd: EtcdCluster;
let a: Tree;
let b: Tree;

beforeAll(async () => {
  etcd = await startEtcd();
  a = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "local/" });
  b = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "local/" });
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await etcd?.remove();
});

/** How many range requests etcd has served, from its metrics. */
async function etcdRanges(): Promise<number> {
  const text = await (await fetch(`${etcd.members[0]!.clientUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("etcd_debugging_mvcc_range_total"));
  if (!line) throw new Error("etcd's metrics have no range counter");
  return Number(line.split(" ").pop());
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
    const before = await etcdRanges();
    for (let i = 0; i < 50; i++) expect(await a.get("/hot/k")).toMatchObject({ value: str("v") });
    expect((await etcdRanges()) - before).toBeLessThan(5);
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

  it("keeps directories' counts current in the cache as children come and go", async () => {
    await a.mkindex("/dir/");
    await until(async () => (await b.get("/dir/"))?.kind, "index");
    await a.set("/dir/x", str("x"));
    await a.set("/dir/y", str("y"));
    expect(await until(async () => ((await b.get("/dir/")) as { count?: number })?.count, 2)).toBe(2);
    await b.del("/dir/x");
    expect(await until(async () => ((await a.get("/dir/")) as { count?: number })?.count, 1)).toBe(1);
  });
});
