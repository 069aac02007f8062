import { describe, expect, it } from "vitest";
import type { Tree, WatchBatch } from "../../tree/types.js";
import { int64, json, str } from "../../tree/value.js";
import { useTwoTrees } from "./fixtures.js";

// Two trees with their own clients on one etcd and one prefix: what two byteseek servers are.
let a: Tree;
let b: Tree;

useTwoTrees("shared/", (_etcd, x, y) => ([a, b] = [x, y]));

describe("two trees on one etcd", () => {
  it("shows a write through A to B's get, list and watch, at the same revision", async () => {
    const from = a.revision() + 1;
    const watched = (async () => {
      for await (const batch of b.watch("/byteseek/tools/", { fromRev: from })) return batch;
      return undefined;
    })();
    const res = await a.set("/byteseek/tools/demo.echo", json({ name: "demo.echo", snippet: "echo" }));
    const node = await b.get("/byteseek/tools/demo.echo");
    expect(node).toMatchObject({
      version: 1,
      modRev: res.rev,
      value: json({ name: "demo.echo", snippet: "echo" }),
    });
    expect((await b.list("/byteseek/tools/")).children.map((c) => c.name)).toEqual(["demo.echo"]);
    const batch = (await watched) as WatchBatch;
    expect(batch.rev).toBe(res.rev);
    // The same batch also carries the parent directories the set created.
    expect(batch.events).toContainEqual(
      expect.objectContaining({ type: "put", key: "/byteseek/tools/demo.echo", version: 1, rev: res.rev }),
    );
    expect(b.revision()).toBeGreaterThanOrEqual(res.rev);
  });

  it("keeps /byteseek/tool/<vid>/<n> dense and unique under 2×32 concurrent appenders", async () => {
    const dir = "/byteseek/tool/run-42/";
    const calls = Array.from({ length: 64 }, (_v, i) =>
      (i % 2 === 0 ? a : b).append(dir, json({ call: i }), { vid: "run-42" }),
    );
    const results = await Promise.all(calls);
    const numbers = results.map((r) => Number(r.key.slice(dir.length))).sort((x, y) => x - y);
    expect(numbers).toEqual(Array.from({ length: 64 }, (_v, i) => i));
    expect(new Set(results.map((r) => r.rev)).size).toBe(64);
    for (const [i, r] of results.entries()) {
      const node = await (i % 2 === 0 ? b : a).get(r.key);
      expect(node).toMatchObject({ value: json({ call: i }), vid: "run-42", version: 1 });
    }
    expect(await a.get(dir)).toMatchObject({ kind: "index", count: 64 });
    expect((await b.append(dir, str("next"))).key).toBe(`${dir}64`);
  });

  it("keeps child counts exact when both create and delete siblings under new parents at once", async () => {
    await Promise.all(
      Array.from({ length: 48 }, (_v, i) =>
        (i % 2 === 0 ? a : b).set(`/c/${i % 12}/leaf${i}`, int64(BigInt(i))),
      ),
    );
    expect(await b.get("/c/")).toMatchObject({ count: 12 });
    for (let d = 0; d < 12; d++) expect(await a.get(`/c/${d}/`)).toMatchObject({ count: 4 });
    await Promise.all(
      Array.from({ length: 48 }, (_v, i) => (i % 2 === 0 ? b : a).del(`/c/${i % 12}/leaf${i}`)),
    );
    for (let d = 0; d < 12; d++) expect(await b.get(`/c/${d}/`)).toMatchObject({ count: 0 });
  });

  it("loses no update under compare-and-set writers on both trees", async () => {
    await a.set("/counter", int64(0n));
    const writer = async (tree: Tree) => {
      for (let done = 0; done < 10; ) {
        const node = await tree.get("/counter");
        if (node?.kind !== "int64") throw new Error("counter vanished");
        try {
          await tree.set("/counter", int64((node.value.value as bigint) + 1n), { ifVersion: node.version });
          done++;
        } catch (err) {
          if ((err as { code?: string }).code !== "TREE_VERSION_MISMATCH") throw err;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_v, i) => writer(i % 2 === 0 ? a : b)));
    expect(await b.get("/counter", { consistency: "linearizable" })).toMatchObject({
      value: int64(80n),
      version: 81,
    });
  });
});
