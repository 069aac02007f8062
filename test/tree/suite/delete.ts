import { describe, expect, it } from "vitest";
import { str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, getDir, getValue, names } from "../helpers.js";

export function deleteSuite(ctx: SuiteContext): void {
  describe("del", () => {
    it("deletes a value, leaving its directory in place with one child fewer", async () => {
      const tree = await ctx.open();
      await tree.set("/d/a", str("a"));
      await tree.set("/d/b", str("b"));
      const before = tree.revision();
      const res = await tree.del("/d/a");
      expect(res).toMatchObject({ key: "/d/a", deleted: true, version: 0, rev: before + 1 });
      expect(await tree.get("/d/a")).toBeUndefined();
      expect((await getDir(tree, "/d/")).count).toBe(1);
      await tree.del("/d/b");
      expect((await getDir(tree, "/d/")).count).toBe(0);
      expect(await names(tree, "/d/")).toEqual([]);
    });

    it("answers deleted: false for an absent key, without an error or a new revision", async () => {
      const tree = await ctx.open();
      await tree.set("/x", str("x"));
      const before = tree.revision();
      const res = await tree.del("/absent");
      expect(res).toMatchObject({ key: "/absent", deleted: false, version: 0 });
      expect(tree.revision()).toBe(before);
      expect((await tree.del("/absent/deeper")).deleted).toBe(false);
    });

    it("deletes an empty directory and refuses a non-empty one with TREE_NOT_EMPTY", async () => {
      const tree = await ctx.open();
      await tree.mkindex("/e/");
      await tree.set("/f/x", str("x"));
      expect((await tree.del("/e/")).deleted).toBe(true);
      expect(await tree.get("/e/")).toBeUndefined();
      await expectTreeError(() => tree.del("/f/"), "TREE_NOT_EMPTY");
      expect(await tree.get("/f/x")).toBeDefined();
    });
  });

  describe("deltree", () => {
    it("removes a directory and everything under it in one revision, counting what it removed", async () => {
      const tree = await ctx.open();
      await tree.set("/t/a", str("a"));
      await tree.set("/t/b/c", str("c"));
      await tree.set("/t/b/d/e", str("e"));
      await tree.set("/t/‥sys", str("system entry"));
      await tree.set("/t", str("a value beside the directory"));
      await tree.set("/keep/x", str("x"));
      const before = tree.revision();
      const res = await tree.deltree("/t/");
      // /t/, /t/a, /t/b/, /t/b/c, /t/b/d/, /t/b/d/e, /t/‥sys
      expect(res).toMatchObject({ key: "/t/", removed: 7, rev: before + 1 });
      expect(tree.revision()).toBe(before + 1);
      for (const key of ["/t/", "/t/a", "/t/b/", "/t/b/c", "/t/b/d/", "/t/b/d/e", "/t/‥sys"])
        expect(await tree.get(key)).toBeUndefined();
      expect((await getValue(tree, "/t")).value).toEqual(str("a value beside the directory"));
      expect(await names(tree, "/")).toEqual(["keep/", "t"]);
      expect((await getDir(tree, "/")).count).toBe(2);
    });

    it("answers removed 0 for an absent directory, without an error", async () => {
      const tree = await ctx.open();
      const res = await tree.deltree("/absent/");
      expect(res.removed).toBe(0);
    });

    it("lets the removed keys be written again from version 1", async () => {
      const tree = await ctx.open();
      await tree.set("/t/a", str("1"));
      await tree.set("/t/a", str("2"));
      await tree.deltree("/t/");
      const res = await tree.set("/t/a", str("3"));
      expect(res.version).toBe(1);
      expect((await getDir(tree, "/t/")).count).toBe(1);
    });
  });

  describe("mkindex", () => {
    it("creates an empty directory and its missing parents", async () => {
      const tree = await ctx.open();
      const before = tree.revision();
      const res = await tree.mkindex("/m/n/o/");
      expect(res).toMatchObject({ key: "/m/n/o/", rev: before + 1, version: 1 });
      expect(await getDir(tree, "/m/n/o/")).toMatchObject({ count: 0, version: 1, createRev: res.rev });
      expect((await getDir(tree, "/m/")).count).toBe(1);
      expect(await names(tree, "/m/n/")).toEqual(["o/"]);
      expect((await tree.list("/m/n/o/")).children).toEqual([]);
    });

    it("leaves an existing directory as it is", async () => {
      const tree = await ctx.open();
      const created = await tree.set("/m/a", str("a"));
      await tree.mkindex("/m/");
      expect(await getDir(tree, "/m/")).toMatchObject({ count: 1, createRev: created.rev });
      expect((await getValue(tree, "/m/a")).value).toEqual(str("a"));
    });
  });

  describe("clear", () => {
    it("empties the whole store while the revision counter goes on", async () => {
      const tree = await ctx.open();
      await tree.set("/a/b", str("b"));
      await tree.set("/c", str("c"), { ro: true });
      await tree.set("/s/‥sys", str("s"));
      const before = tree.revision();
      const res = await tree.clear();
      expect(res.rev).toBeGreaterThan(before);
      expect(tree.revision()).toBe(res.rev);
      expect(await names(tree, "/", { system: true })).toEqual([]);
      for (const key of ["/a/b", "/a/", "/c", "/s/‥sys"]) expect(await tree.get(key)).toBeUndefined();
      const again = await tree.set("/a/b", str("new"));
      expect(again).toMatchObject({ version: 1, rev: res.rev + 1 });
    });
  });
}
