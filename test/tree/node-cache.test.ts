import { describe, expect, it } from "vitest";
import { json, openTree, str } from "../../tree/index.js";
import { NodeCache } from "../../tree/node-cache.js";
import type { TreeNode } from "../../tree/types.js";
import { tempDir } from "./temp-dir.js";

const node = (key: string, value: string): TreeNode => ({
  key,
  kind: "char/utf8",
  value: str(value),
  version: 1,
  createRev: 1,
  modRev: 1,
  mtime: 0,
  ro: false,
});

describe("NodeCache", () => {
  it("keeps what it is given, frozen, until told to forget it", () => {
    const cache = new NodeCache(1024 * 1024);
    const n = cache.remember("/a", node("/a", "x"), 40);
    expect(cache.get("/a")).toBe(n);
    expect(Object.isFrozen(n)).toBe(true);
    expect(Object.isFrozen(n.kind === "index" ? n : n.value)).toBe(true);
    cache.forget("/a");
    expect(cache.get("/a")).toBeUndefined();
  });

  it("drops the oldest entries to stay within its byte budget", () => {
    const cache = new NodeCache(64 * 1024);
    for (let i = 0; i < 1000; i++) cache.remember(`/k${i}`, node(`/k${i}`, "v"), 100);
    expect(cache.get("/k0")).toBeUndefined();
    expect(cache.get("/k999")).toBeDefined();
    let kept = 0;
    for (let i = 0; i < 1000; i++) if (cache.get(`/k${i}`)) kept++;
    // ~360 estimated bytes an entry: 180 fit in 64 KiB; two generations keep between half and all of it.
    expect(kept).toBeGreaterThanOrEqual(80);
    expect(kept).toBeLessThanOrEqual(182);
  });

  it("does not keep a value too large for its budget, and a zero budget keeps nothing", () => {
    const cache = new NodeCache(64 * 1024);
    cache.remember("/big", node("/big", "x"), 10_000);
    expect(cache.get("/big")).toBeUndefined();
    const off = new NodeCache(0);
    off.remember("/a", node("/a", "x"), 1);
    expect(off.get("/a")).toBeUndefined();
  });
});

describe("the tree's node cache", () => {
  it("answers the value last written, never an older one, across set, txn, del and deltree", async () => {
    const dir = await tempDir();
    const tree = await openTree({ backend: "classic", location: dir.path });
    try {
      await tree.set("/c/a", str("1"));
      expect((await tree.get("/c/a"))?.version).toBe(1);
      await tree.set("/c/a", str("2"));
      expect(await tree.get("/c/a")).toMatchObject({ version: 2, value: str("2") });
      await tree.txn({ success: [{ op: "set", key: "/c/a", value: json({ n: 3 }) }] });
      const three = await tree.get("/c/a");
      expect(three).toMatchObject({ version: 3, value: json({ n: 3 }) });
      expect(await tree.get("/c/a")).toBe(three);
      expect(() => {
        (three as unknown as { version: number }).version = 99;
      }).toThrow(TypeError);
      expect((await tree.get("/c/"))?.kind === "index" && (await tree.get("/c/"))).toMatchObject({
        count: 1,
      });
      await tree.set("/c/b", str("b"));
      expect(await tree.get("/c/")).toMatchObject({ count: 2 });
      await tree.del("/c/a");
      expect(await tree.get("/c/a")).toBeUndefined();
      await tree.deltree("/c/");
      expect(await tree.get("/c/b")).toBeUndefined();
      expect(await tree.get("/c/")).toBeUndefined();
    } finally {
      await tree.close();
      await dir.remove();
    }
  });

  it("serves reads right after concurrent writers without a stale answer", async () => {
    const dir = await tempDir();
    const tree = await openTree({ backend: "classic", location: dir.path });
    try {
      await tree.set("/n", str("0"));
      await tree.get("/n");
      const writes = Array.from({ length: 32 }, (_, i) => tree.set("/n", str(String(i + 1))));
      const results = await Promise.all(writes);
      const last = results.reduce((a, b) => (b.version > a.version ? b : a));
      expect(await tree.get("/n")).toMatchObject({ version: last.version });
      expect((await tree.get("/n"))?.version).toBe(33);
    } finally {
      await tree.close();
      await dir.remove();
    }
  });
});
