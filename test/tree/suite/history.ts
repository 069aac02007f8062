import { describe, expect, it } from "vitest";
import type { Tree } from "../../../tree/types.js";
import { int64, json, str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";

export function historySuite(ctx: SuiteContext): void {
  describe("history", () => {
    it("answers no history for a key written once, or never", async () => {
      const tree = await ctx.open({ historyLimit: 10 });
      await tree.set("/h", str("only"));
      expect(await tree.history("/h")).toEqual([]);
      expect(await tree.history("/never")).toEqual([]);
    });

    it("keeps previous versions newest first, with kind, value, version and modRev", async () => {
      const tree = await ctx.open();
      const w1 = await tree.set("/byteseek/prompt/system", str("v1"));
      const w2 = await tree.set("/byteseek/prompt/system", json({ v: 2 }));
      await tree.set("/byteseek/prompt/system", int64(3n));
      const history = await tree.history("/byteseek/prompt/system");
      expect(history).toEqual([
        expect.objectContaining({
          key: "/byteseek/prompt/system",
          kind: "json",
          value: json({ v: 2 }),
          version: 2,
          modRev: w2.rev,
        }),
        expect.objectContaining({
          key: "/byteseek/prompt/system",
          kind: "char/utf8",
          value: str("v1"),
          version: 1,
          modRev: w1.rev,
        }),
      ]);
      for (const entry of history) {
        expect(typeof entry.mtime).toBe("number");
        expect(entry.deleted ?? false).toBe(false);
      }
    });

    it("keeps at most historyLimit previous versions, dropping the oldest", async () => {
      const tree = await ctx.open({ historyLimit: 3 });
      for (let i = 1; i <= 10; i++) await tree.set("/h", int64(BigInt(i)));
      const history = await tree.history("/h");
      expect(history.map((h) => [h.version, h.value])).toEqual([
        [9, int64(9n)],
        [8, int64(8n)],
        [7, int64(7n)],
      ]);
    });

    it("keeps 10 previous versions under /byteseek/ by default, and none elsewhere", async () => {
      const tree = await ctx.open();
      for (let i = 1; i <= 15; i++) {
        await tree.set("/byteseek/prompt/h", int64(BigInt(i)));
        await tree.set("/data/h", int64(BigInt(i)));
      }
      expect((await tree.history("/byteseek/prompt/h")).map((h) => h.version)).toEqual(range(14, 5));
      expect(await tree.history("/data/h")).toEqual([]);
      await tree.del("/data/h");
      expect(await tree.history("/data/h")).toEqual([]);
    });

    it("keeps counts by directory, the nearest configured directory above a value deciding", async () => {
      const tree = await ctx.open({ historyLimit: { "/": 1, "/a/": 3, "/a/b/": 0 } });
      for (const key of ["/top", "/a/x", "/a/deeper/x", "/a/b/x", "/a/b/c/x", "/ab/x"])
        for (let i = 1; i <= 6; i++) await tree.set(key, int64(BigInt(i)));
      const versions = async (key: string) => (await tree.history(key)).map((h) => h.version);
      expect(await versions("/top")).toEqual([5]);
      expect(await versions("/a/x")).toEqual([5, 4, 3]);
      expect(await versions("/a/deeper/x")).toEqual([5, 4, 3]);
      expect(await versions("/a/b/x")).toEqual([]);
      expect(await versions("/a/b/c/x")).toEqual([]);
      expect(await versions("/ab/x")).toEqual([5]); // /a/ is a directory, not a string prefix of /ab/
    });

    it("records the last value of every key a deltree removed, so a whole folder can be restored", async () => {
      const tree = await ctx.open();
      await tree.set("/byteseek/tools/a", json({ name: "a", v: 1 }));
      await tree.set("/byteseek/tools/a", json({ name: "a", v: 2 }));
      await tree.set("/byteseek/tools/sub/b", str("b"));
      await tree.deltree("/byteseek/tools/");
      expect((await tree.history("/byteseek/tools/a"))[0]).toMatchObject({
        value: json({ name: "a", v: 2 }),
        version: 2,
        deleted: true,
      });
      expect((await tree.history("/byteseek/tools/sub/b"))[0]).toMatchObject({
        value: str("b"),
        deleted: true,
      });
    });

    it("records the value a key had when it was deleted, so it can be restored", async () => {
      const tree = await ctx.open();
      await tree.set("/byteseek/tools/x", json({ name: "x", v: 1 }));
      await tree.set("/byteseek/tools/x", json({ name: "x", v: 2 }));
      await tree.del("/byteseek/tools/x");
      const history = await tree.history("/byteseek/tools/x");
      expect(history[0]).toMatchObject({ value: json({ name: "x", v: 2 }), version: 2, deleted: true });
      expect(history[1]).toMatchObject({ value: json({ name: "x", v: 1 }), version: 1 });
      // Rolling back is a set of the retained value.
      await tree.set("/byteseek/tools/x", history[0]?.value ?? json(null));
      expect((await tree.get("/byteseek/tools/x"))?.version).toBe(1);
    });

    it("records a deleted value's entry at the value's own last modRev, not the delete's", async () => {
      // Every entry describes a version as it was: its version, its modRev, its mtime (etcd's
      // previous key-value has its own mod_revision); the delete's revision is the event's.
      const tree = await ctx.open({ historyLimit: 10 });
      const w1 = await tree.set("/d/x", str("one"));
      const w2 = await tree.set("/d/x", str("two"));
      const gone = await tree.del("/d/x");
      expect(gone.rev).toBeGreaterThan(w2.rev);
      expect((await tree.history("/d/x")).map((h) => [h.version, h.modRev, h.deleted === true])).toEqual([
        [2, w2.rev, true],
        [1, w1.rev, false],
      ]);
      // Made again and deleted again: each deleted version keeps its own modRev.
      const w3 = await tree.set("/d/x", str("three"));
      await tree.del("/d/x");
      expect((await tree.history("/d/x")).map((h) => [h.version, h.modRev, h.deleted === true])).toEqual([
        [1, w3.rev, true],
        [2, w2.rev, true],
        [1, w1.rev, false],
      ]);
    });

    it("keeps no version that was written and replaced within one transaction (no revision ever held it)", async () => {
      const tree = await ctx.open({ historyLimit: 10 });
      const w0 = await tree.set("/t/x", str("v0"));
      const txn = await tree.txn({
        success: [
          { op: "set", key: "/t/x", value: str("v1") },
          { op: "set", key: "/t/x", value: str("v2") },
          { op: "set", key: "/t/fresh", value: str("f1") },
          { op: "del", key: "/t/fresh" },
        ],
      });
      expect(await tree.get("/t/x")).toMatchObject({ value: str("v2"), version: 3, modRev: txn.rev });
      expect((await tree.history("/t/x")).map((h) => [h.value, h.version, h.modRev])).toEqual([
        [str("v0"), 1, w0.rev],
      ]);
      expect(await tree.history("/t/fresh")).toEqual([]);
      expect(await tree.get("/t/fresh")).toBeUndefined();
    });

    it("hands a key made again after its delete the history the delete kept", async () => {
      const tree = await ctx.open({ historyLimit: 10 });
      await tree.set("/d/x", str("one"));
      await tree.set("/d/x", str("two"));
      await tree.del("/d/x");
      await tree.set("/d/x", str("three"));
      await tree.set("/d/other", str("never deleted")); // a new key beside it starts with none
      expect((await tree.history("/d/x")).map((h) => [h.value, h.deleted === true])).toEqual([
        [str("two"), true],
        [str("one"), false],
      ]);
      expect(await tree.history("/d/other")).toEqual([]);
    });

    it("hands it that history also when its directories were removed and made again", async () => {
      // Each on a fresh tree: a flag one case leaves on the root would hide a miss in the next.
      const cases: Array<[string, (tree: Tree) => Promise<unknown>]> = [
        ["/t/sub/x", (tree) => tree.deltree("/t/")], // deltree of a directory above
        // a delete of the value, then of its empty directory
        [
          "/e/dir/x",
          async (tree) => {
            await tree.del("/e/dir/x");
            await tree.del("/e/dir/");
          },
        ],
        // a delete of the value, then a deltree of a directory between
        [
          "/f/a/b/x",
          async (tree) => {
            await tree.del("/f/a/b/x");
            await tree.deltree("/f/a/");
          },
        ],
      ];
      for (const [key, remove] of cases) {
        const tree = await ctx.open({ historyLimit: 10 });
        await tree.set(key, str("before"));
        await remove(tree);
        await tree.set(key, str("after"));
        expect((await tree.history(key))[0], key).toMatchObject({ value: str("before"), deleted: true });
      }
    });

    it("forgets kept history on a deltree of the root, as on clear (the HTTP API's clear is one)", async () => {
      const tree = await ctx.open({ historyLimit: 10 });
      await tree.set("/c/x", str("v1"));
      await tree.set("/c/x", str("v2"));
      await tree.set("/c/y", str("gone"));
      await tree.del("/c/y");
      expect(await tree.deltree("/", { force: true })).toMatchObject({ removed: 2 });
      expect(await tree.get("/")).toMatchObject({ count: 0 });
      expect(await tree.history("/c/x")).toEqual([]);
      await tree.set("/c/x", str("after"));
      await tree.set("/c/y", str("after"));
      expect(await tree.history("/c/x")).toEqual([]);
      expect(await tree.history("/c/y")).toEqual([]);
    });

    it("forgets kept history on clear", async () => {
      const tree = await ctx.open({ historyLimit: 10 });
      await tree.set("/c/x", str("before"));
      await tree.del("/c/x");
      await tree.clear();
      await tree.set("/c/x", str("after"));
      expect(await tree.history("/c/x")).toEqual([]);
    });
  });
}

function range(from: number, downTo: number): number[] {
  return Array.from({ length: from - downTo + 1 }, (_v, i) => from - i);
}
