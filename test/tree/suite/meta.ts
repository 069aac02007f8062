import { describe, expect, it } from "vitest";
import { int64, str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, getDir, getValue } from "../helpers.js";

export function metaSuite(ctx: SuiteContext): void {
  describe("metadata", () => {
    it("gives a new key version 1 and createRev = modRev = the write's revision", async () => {
      const tree = await ctx.open();
      const before = tree.revision();
      const t0 = Date.now();
      const res = await tree.set("/m", str("a"));
      const t1 = Date.now();
      expect(res).toMatchObject({ key: "/m", rev: before + 1, version: 1 });
      expect(tree.revision()).toBe(before + 1);
      const node = await getValue(tree, "/m");
      expect(node).toMatchObject({
        key: "/m",
        kind: "char/utf8",
        version: 1,
        createRev: res.rev,
        modRev: res.rev,
      });
      expect(node.ro).toBe(false);
      expect(node.vid).toBeUndefined();
      expect(node.mtime).toBeGreaterThanOrEqual(t0);
      expect(node.mtime).toBeLessThanOrEqual(t1);
    });

    it("bumps version by one on each write and moves modRev, keeping createRev", async () => {
      const tree = await ctx.open();
      const first = await tree.set("/m", int64(1n));
      const second = await tree.set("/m", int64(2n));
      const third = await tree.set("/m", int64(3n));
      expect([first.version, second.version, third.version]).toEqual([1, 2, 3]);
      expect(second.rev).toBe(first.rev + 1);
      expect(third.rev).toBe(second.rev + 1);
      const node = await getValue(tree, "/m");
      expect(node).toMatchObject({ version: 3, createRev: first.rev, modRev: third.rev });
    });

    it("shares one revision counter across keys, bumped exactly once per write", async () => {
      const tree = await ctx.open();
      const revs: number[] = [tree.revision()];
      const step = async (write: Promise<{ rev: number }>) => {
        const res = await write;
        expect(res.rev).toBe(tree.revision());
        revs.push(res.rev);
      };
      await step(tree.set("/a/b/c/d", str("deep, creating three parents")));
      await step(tree.set("/x", str("other key")));
      await step(tree.mkindex("/e/f/"));
      await step(tree.append("/q/", str("appended")));
      await step(tree.del("/x"));
      await step(tree.deltree("/a/"));
      await step(
        tree.txn({
          success: [
            { op: "set", key: "/t/1", value: str("1") },
            { op: "set", key: "/t/2", value: str("2") },
            { op: "del", key: "/q/0" },
          ],
        }),
      );
      await step(tree.clear());
      const start = revs[0] ?? 0;
      expect(revs).toEqual(revs.map((_r, i) => start + i));
    });

    it("restarts version at 1 with a new createRev after a delete", async () => {
      const tree = await ctx.open();
      await tree.set("/m", str("a"));
      await tree.set("/m", str("b"));
      const del = await tree.del("/m");
      expect(del).toMatchObject({ key: "/m", deleted: true, version: 0 });
      const again = await tree.set("/m", str("c"));
      expect(again.version).toBe(1);
      expect(await getValue(tree, "/m")).toMatchObject({
        version: 1,
        createRev: again.rev,
        modRev: again.rev,
      });
    });

    it("records the owner vid given on a write", async () => {
      const tree = await ctx.open();
      await tree.set("/owned", str("x"), { vid: "run-7" });
      await tree.append("/log/", str("y"), { vid: "run-8" });
      expect((await getValue(tree, "/owned")).vid).toBe("run-7");
      expect((await getValue(tree, "/log/0")).vid).toBe("run-8");
    });

    it("creates missing parent directories on set, as mkdir -p", async () => {
      const tree = await ctx.open();
      const res = await tree.set("/p/q/r/s", str("leaf"));
      for (const dir of ["/p/", "/p/q/", "/p/q/r/"]) {
        const node = await getDir(tree, dir);
        expect(node.count).toBe(1);
        expect(node.createRev).toBe(res.rev);
      }
      const root = await getDir(tree, "/");
      expect(root.count).toBe(1);
      await tree.set("/p/q/other", str("sibling"));
      expect((await getDir(tree, "/p/q/")).count).toBe(2);
      expect((await getDir(tree, "/p/q/")).createRev).toBe(res.rev);
    });

    it("answers undefined for an absent key, and for a value key whose directory exists", async () => {
      const tree = await ctx.open();
      expect(await tree.get("/nothing")).toBeUndefined();
      expect(await tree.get("/nothing/")).toBeUndefined();
      await tree.mkindex("/d/");
      expect(await tree.get("/d")).toBeUndefined();
    });
  });

  describe("read-only keys", () => {
    it("refuses set and del on a ro key with TREE_READ_ONLY unless forced", async () => {
      const tree = await ctx.open();
      await tree.set("/ro", str("locked"), { ro: true });
      expect((await getValue(tree, "/ro")).ro).toBe(true);
      const before = tree.revision();
      await expectTreeError(() => tree.set("/ro", str("changed")), "TREE_READ_ONLY");
      await expectTreeError(() => tree.set("/ro", str("changed"), { ro: false }), "TREE_READ_ONLY");
      await expectTreeError(() => tree.del("/ro"), "TREE_READ_ONLY");
      expect(tree.revision()).toBe(before);
      expect(await getValue(tree, "/ro")).toMatchObject({ value: str("locked"), version: 1, ro: true });

      const forced = await tree.set("/ro", str("forced"), { force: true });
      expect(forced.version).toBe(2);
      // An omitted ro keeps the flag.
      expect(await getValue(tree, "/ro")).toMatchObject({ value: str("forced"), ro: true });
      await tree.set("/ro", str("unlocked"), { force: true, ro: false });
      await tree.set("/ro", str("free"));
      expect(await getValue(tree, "/ro")).toMatchObject({ value: str("free"), ro: false, version: 4 });
      await tree.set("/ro", str("locked again"), { ro: true });
      expect((await tree.del("/ro", { force: true })).deleted).toBe(true);
      expect(await tree.get("/ro")).toBeUndefined();
    });

    it("refuses to deltree a directory holding a ro key unless forced, removing nothing", async () => {
      const tree = await ctx.open();
      await tree.set("/d/plain", str("p"));
      await tree.set("/d/sub/locked", str("l"), { ro: true });
      const err = await expectTreeError(() => tree.deltree("/d/"), "TREE_READ_ONLY");
      // Every engine names the read-only key it found, and says what to do.
      expect(err.message).toBe(
        "/d/sub/locked is read-only, so /d/ cannot be removed; force the deltree or mark it writable first",
      );
      expect(err.details).toEqual({ key: "/d/sub/locked" });
      expect(await tree.get("/d/plain")).toBeDefined();
      expect(await tree.get("/d/sub/locked")).toBeDefined();
      const res = await tree.deltree("/d/", { force: true });
      expect(res.removed).toBe(4);
      expect(await tree.get("/d/")).toBeUndefined();
    });

    it("refuses a txn that writes a ro key without force, and runs it with force", async () => {
      const tree = await ctx.open();
      await tree.set("/ro", str("locked"), { ro: true });
      const before = tree.revision();
      await expectTreeError(
        () =>
          tree.txn({
            success: [
              { op: "set", key: "/other", value: str("x") },
              { op: "set", key: "/ro", value: str("y") },
            ],
          }),
        "TREE_READ_ONLY",
      );
      expect(tree.revision()).toBe(before);
      expect(await tree.get("/other")).toBeUndefined();
      await tree.txn({ success: [{ op: "set", key: "/ro", value: str("y"), force: true }] });
      expect((await getValue(tree, "/ro")).value).toEqual(str("y"));
    });
  });

  describe("compare-and-set and create-only", () => {
    it("sets when ifVersion matches and refuses with TREE_VERSION_MISMATCH when it does not", async () => {
      const tree = await ctx.open();
      await tree.set("/c", int64(1n));
      const ok = await tree.set("/c", int64(2n), { ifVersion: 1 });
      expect(ok.version).toBe(2);
      const before = tree.revision();
      await expectTreeError(() => tree.set("/c", int64(3n), { ifVersion: 1 }), "TREE_VERSION_MISMATCH");
      await expectTreeError(() => tree.set("/c", int64(3n), { ifVersion: 3 }), "TREE_VERSION_MISMATCH");
      expect(tree.revision()).toBe(before);
      expect(await getValue(tree, "/c")).toMatchObject({ value: int64(2n), version: 2 });
    });

    it("treats ifVersion 0 as must-not-exist", async () => {
      const tree = await ctx.open();
      const created = await tree.set("/c", str("new"), { ifVersion: 0 });
      expect(created.version).toBe(1);
      await expectTreeError(() => tree.set("/c", str("again"), { ifVersion: 0 }), "TREE_VERSION_MISMATCH");
      await expectTreeError(() => tree.set("/absent", str("x"), { ifVersion: 1 }), "TREE_VERSION_MISMATCH");
      expect(await tree.get("/absent")).toBeUndefined();
      expect((await getValue(tree, "/c")).value).toEqual(str("new"));
    });

    it("creates with create: true, and refuses an existing key with TREE_EXISTS", async () => {
      const tree = await ctx.open();
      await tree.set("/c", str("first"), { create: true });
      await expectTreeError(() => tree.set("/c", str("second"), { create: true }), "TREE_EXISTS");
      expect(await getValue(tree, "/c")).toMatchObject({ value: str("first"), version: 1 });
      await tree.del("/c");
      await tree.set("/c", str("after delete"), { create: true });
      expect((await getValue(tree, "/c")).value).toEqual(str("after delete"));
    });

    it("deletes when ifVersion matches and refuses with TREE_VERSION_MISMATCH when it does not", async () => {
      const tree = await ctx.open();
      await tree.set("/c", str("a"));
      await tree.set("/c", str("b"));
      await expectTreeError(() => tree.del("/c", { ifVersion: 1 }), "TREE_VERSION_MISMATCH");
      expect(await tree.get("/c")).toBeDefined();
      await expectTreeError(() => tree.del("/absent", { ifVersion: 1 }), "TREE_VERSION_MISMATCH");
      const res = await tree.del("/c", { ifVersion: 2 });
      expect(res.deleted).toBe(true);
      expect(await tree.get("/c")).toBeUndefined();
    });

    it("tells the caller the current version when a CAS fails", async () => {
      const tree = await ctx.open();
      await tree.set("/c", str("a"));
      await tree.set("/c", str("b"));
      const err = await expectTreeError(
        () => tree.set("/c", str("x"), { ifVersion: 1 }),
        "TREE_VERSION_MISMATCH",
      );
      expect(JSON.stringify(err.details) + err.message).toMatch(/2/);
    });
  });
}
