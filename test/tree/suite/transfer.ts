import { describe, expect, it } from "vitest";
import { copy, move } from "../../../tree/transfer.js";
import { int64, str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, getDir, getValue, names, take } from "../helpers.js";

export function transferSuite(ctx: SuiteContext): void {
  describe("move and copy", () => {
    it("moves a directory in one revision: every key lands (system entries too), the source is gone, counts and events follow", async () => {
      const tree = await ctx.open();
      await tree.set("/src/a", str("a"));
      await tree.set("/src/b/c", int64(7n));
      await tree.set("/src/‥sys", str("bookkeeping"));
      await tree.set("/keep", str("k"));
      const before = tree.revision();
      const res = await move(tree, "/src/", "/dst/deep/");
      // /src/, /src/a, /src/b/, /src/b/c, /src/‥sys
      expect(res).toMatchObject({ key: "/dst/deep/", keys: 5, rev: before + 1 });
      expect(tree.revision()).toBe(before + 1);
      expect(await tree.get("/src/")).toBeUndefined();
      expect(await tree.get("/src/a")).toBeUndefined();
      const c = await getValue(tree, "/dst/deep/b/c");
      expect(c).toMatchObject({ value: int64(7n), version: 1, createRev: before + 1, modRev: before + 1 });
      expect((await getValue(tree, "/dst/deep/‥sys")).value).toEqual(str("bookkeeping"));
      expect((await getDir(tree, "/dst/deep/")).count).toBe(3);
      expect((await getDir(tree, "/dst/")).count).toBe(1);
      expect(await names(tree, "/")).toEqual(["dst/", "keep"]);
      const [batch] = await take(tree.watch("/", { fromRev: before + 1 }), 1);
      expect(batch!.rev).toBe(before + 1);
      const kinds = batch!.events.map((e) => `${e.type} ${e.key}`);
      expect(kinds).toContain("deltree /src/");
      expect(kinds).toContain("put /dst/deep/b/c");
    });

    it("renames a value beside its siblings, and copies leave the source as it was", async () => {
      const tree = await ctx.open();
      await tree.set("/d/x", str("x"));
      await tree.set("/d/y", str("y"));
      await move(tree, "/d/x", "/d/z");
      expect(await names(tree, "/d/")).toEqual(["y", "z"]);
      expect((await getDir(tree, "/d/")).count).toBe(2);
      const res = await copy(tree, "/d/", "/e/");
      expect(res.keys).toBe(3);
      expect(await names(tree, "/d/")).toEqual(["y", "z"]);
      expect(await names(tree, "/e/")).toEqual(["y", "z"]);
      expect((await getValue(tree, "/e/z")).value).toEqual(str("x"));
    });

    it("refuses an existing target with TREE_EXISTS; with overwrite the target ends up as the source, its versions going on as an etcd put", async () => {
      const tree = await ctx.open();
      await tree.set("/s/same", str("new"));
      await tree.set("/s/only-src", str("n"));
      const t1 = await tree.set("/t/same", str("old"));
      await tree.set("/t/same", str("older still"));
      await tree.set("/t/only-dst/x", str("gone"));
      await expectTreeError(() => copy(tree, "/s/", "/t/"), "TREE_EXISTS");
      await expectTreeError(() => move(tree, "/s/same", "/t/same"), "TREE_EXISTS");
      const res = await copy(tree, "/s/", "/t/", { overwrite: true });
      const same = await getValue(tree, "/t/same");
      expect(same).toMatchObject({ value: str("new"), version: 3, createRev: t1.rev, modRev: res.rev });
      expect(await names(tree, "/t/")).toEqual(["only-src", "same"]);
      expect(await tree.get("/t/only-dst/x")).toBeUndefined();
      expect((await getDir(tree, "/t/")).count).toBe(2);
    });

    it("refuses moves the tree cannot make: into itself, over its parent, the root, a value to a directory, an absent source", async () => {
      const tree = await ctx.open();
      await tree.set("/a/b/c", str("c"));
      await expectTreeError(() => move(tree, "/a/", "/a/b/x/"), "TREE_INVALID_KEY");
      await expectTreeError(() => move(tree, "/a/b/", "/a/"), "TREE_INVALID_KEY");
      await expectTreeError(() => move(tree, "/a/", "/a/"), "TREE_INVALID_KEY");
      await expectTreeError(() => move(tree, "/", "/x/"), "TREE_INVALID_KEY");
      await expectTreeError(() => copy(tree, "/a/", "/"), "TREE_INVALID_KEY");
      await expectTreeError(() => move(tree, "/a/b/c", "/q/"), "TREE_INVALID_KEY");
      await expectTreeError(() => move(tree, "/nothing/", "/q/"), "TREE_NOT_FOUND");
      expect((await getValue(tree, "/a/b/c")).value).toEqual(str("c"));
    });

    it("keeps system entries and read-only keys where they are: TREE_HIDDEN, TREE_READ_ONLY unless forced", async () => {
      const tree = await ctx.open();
      await tree.set("/h/‥pc", str("p"));
      await tree.set("/h/v", str("v"));
      await expectTreeError(() => move(tree, "/h/‥pc", "/h/pc"), "TREE_HIDDEN");
      await expectTreeError(() => copy(tree, "/h/v", "/h/‥v"), "TREE_HIDDEN");
      await expectTreeError(() => copy(tree, "/h/", "/‥x/h/"), "TREE_HIDDEN");
      await tree.set("/ro/locked", str("l"), { ro: true });
      await tree.set("/ro/free", str("f"));
      const before = tree.revision();
      await expectTreeError(() => move(tree, "/ro/", "/moved/"), "TREE_READ_ONLY");
      expect(tree.revision()).toBe(before);
      expect(await tree.get("/moved/")).toBeUndefined();
      // a copy of a read-only key is read-only, and cannot be overwritten unforced
      await copy(tree, "/ro/", "/copied/");
      expect((await getValue(tree, "/copied/locked")).ro).toBe(true);
      await expectTreeError(() => copy(tree, "/h/", "/copied/", { overwrite: true }), "TREE_READ_ONLY");
      await move(tree, "/ro/", "/moved/", { force: true });
      expect((await getValue(tree, "/moved/locked")).ro).toBe(true);
      expect(await tree.get("/ro/")).toBeUndefined();
    });

    it("keeps a moved value's last version in its old key's history, where history is kept", async () => {
      const tree = await ctx.open({ historyLimit: 5 });
      const w = await tree.set("/m/a", str("one"));
      await move(tree, "/m/a", "/n/a");
      const old = await tree.history("/m/a");
      expect(old).toEqual([
        expect.objectContaining({ value: str("one"), version: 1, modRev: w.rev, deleted: true }),
      ]);
      expect(await tree.history("/n/a")).toEqual([]);
      // moved back, the key picks its kept history up again, as a set after a del would
      await move(tree, "/n/a", "/m/a");
      expect((await tree.history("/m/a")).map((h) => h.value)).toEqual([str("one")]);
    });

    it("runs move and copy as txn operations beside others, all in one revision and only when the compares hold", async () => {
      const tree = await ctx.open();
      await tree.set("/j/a", str("a"));
      const before = tree.revision();
      const failed = await tree.txn({
        compare: [{ key: "/j/a", target: "version", value: 9 }],
        success: [{ op: "move", key: "/j/", to: "/k/" }],
        failure: [{ op: "get", key: "/j/a" }],
      });
      expect(failed.succeeded).toBe(false);
      expect(await tree.get("/k/")).toBeUndefined();
      const res = await tree.txn({
        compare: [{ key: "/j/a", target: "version", value: 1 }],
        success: [
          { op: "copy", key: "/j/a", to: "/j/b" },
          { op: "move", key: "/j/", to: "/k/" },
          { op: "set", key: "/k/c", value: str("c") },
        ],
      });
      expect(res).toMatchObject({ succeeded: true, rev: before + 1 });
      expect(res.results[1]).toMatchObject({ key: "/k/", keys: 3 });
      expect(await names(tree, "/k/")).toEqual(["a", "b", "c"]);
      expect(await tree.get("/j/")).toBeUndefined();
    });
  });
}
