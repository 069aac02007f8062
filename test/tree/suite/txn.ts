import { describe, expect, it } from "vitest";
import type { TxnCompare, TxnOp, TxnRequest } from "../../../tree/types.js";
import { int64, str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, expectTreeErrorOneOf, getDir, getValue } from "../helpers.js";

export function txnSuite(ctx: SuiteContext): void {
  describe("txn", () => {
    it("runs success when every compare holds, all writes at one new revision", async () => {
      const tree = await ctx.open();
      await tree.set("/cfg/mode", str("a"));
      await tree.set("/old", str("old"));
      const before = tree.revision();
      const res = await tree.txn({
        compare: [{ key: "/cfg/mode", target: "version", op: "==", value: 1 }],
        success: [
          { op: "set", key: "/cfg/mode", value: str("b") },
          { op: "set", key: "/new/deep/key", value: int64(7n), vid: "run-1" },
          { op: "del", key: "/old" },
          { op: "get", key: "/cfg/mode" },
        ],
        failure: [{ op: "set", key: "/failed", value: str("x") }],
      });
      expect(res.succeeded).toBe(true);
      expect(res.rev).toBe(before + 1);
      expect(tree.revision()).toBe(before + 1);
      expect(res.results).toHaveLength(4);
      expect(res.results[0]).toMatchObject({ key: "/cfg/mode", rev: before + 1, version: 2 });
      expect(res.results[1]).toMatchObject({ key: "/new/deep/key", rev: before + 1, version: 1 });
      expect(res.results[2]).toMatchObject({ key: "/old", rev: before + 1, version: 0 });
      // A get inside the txn sees the txn's own earlier write.
      expect(res.results[3]).toMatchObject({ key: "/cfg/mode", value: str("b"), version: 2 });
      expect(await getValue(tree, "/cfg/mode")).toMatchObject({ value: str("b"), modRev: before + 1 });
      expect(await getValue(tree, "/new/deep/key")).toMatchObject({ vid: "run-1", createRev: before + 1 });
      expect(await getDir(tree, "/new/deep/")).toMatchObject({ createRev: before + 1 });
      expect(await tree.get("/old")).toBeUndefined();
      expect(await tree.get("/failed")).toBeUndefined();
    });

    it("fails whole, writing nothing, when a set's or del's own ifVersion does not hold", async () => {
      const tree = await ctx.open();
      await tree.set("/cas/k", str("a"));
      await tree.set("/cas/d", str("d"));
      const before = tree.revision();
      const err = await expectTreeError(
        () =>
          tree.txn({
            success: [
              { op: "append", key: "/cas/log/", value: str("entry") },
              { op: "set", key: "/cas/k", value: str("b"), ifVersion: 2 },
            ],
          }),
        "TREE_VERSION_MISMATCH",
      );
      expect(err.message).toMatch(/\/cas\/k/);
      await expectTreeError(
        () => tree.txn({ success: [{ op: "del", key: "/cas/d", ifVersion: 0 }] }),
        "TREE_VERSION_MISMATCH",
      );
      expect(tree.revision()).toBe(before);
      expect(await tree.get("/cas/log/")).toBeUndefined();
      expect((await getValue(tree, "/cas/k")).value).toEqual(str("a"));
      const ok = await tree.txn({
        success: [
          { op: "set", key: "/cas/k", value: str("b"), ifVersion: 1 },
          { op: "del", key: "/cas/d", ifVersion: 1 },
          { op: "set", key: "/cas/new", value: str("n"), ifVersion: 0 },
        ],
      });
      expect(ok.results).toMatchObject([{ version: 2 }, { deleted: true }, { version: 1 }]);
    });

    it("runs failure when a compare fails, and reports the gets of that branch", async () => {
      const tree = await ctx.open();
      await tree.set("/cfg/mode", str("a"));
      const res = await tree.txn({
        compare: [{ key: "/cfg/mode", target: "value", value: str("zzz") }],
        success: [{ op: "set", key: "/cfg/mode", value: str("b") }],
        failure: [
          { op: "get", key: "/cfg/mode" },
          { op: "get", key: "/absent" },
        ],
      });
      expect(res.succeeded).toBe(false);
      expect(res.results).toHaveLength(2);
      expect(res.results[0]).toMatchObject({ key: "/cfg/mode", value: str("a") });
      expect(res.results[1] ?? undefined).toBeUndefined();
      expect((await getValue(tree, "/cfg/mode")).value).toEqual(str("a"));
    });

    it("compares version, createRev, modRev, value and exists with ==, !=, < and >", async () => {
      const tree = await ctx.open();
      const first = await tree.set("/k", int64(5n));
      await tree.set("/k", int64(6n));
      const node = await getValue(tree, "/k");
      const holds = async (c: TxnCompare) => (await tree.txn({ compare: [c] })).succeeded;
      const table: Array<[TxnCompare, boolean]> = [
        [{ key: "/k", target: "version", value: 2 }, true],
        [{ key: "/k", target: "version", op: "==", value: 1 }, false],
        [{ key: "/k", target: "version", op: "!=", value: 1 }, true],
        [{ key: "/k", target: "version", op: "<", value: 3 }, true],
        [{ key: "/k", target: "version", op: ">", value: 2 }, false],
        [{ key: "/k", target: "createRev", value: first.rev }, true],
        [{ key: "/k", target: "modRev", value: node.modRev }, true],
        [{ key: "/k", target: "modRev", op: ">", value: first.rev }, true],
        [{ key: "/k", target: "value", value: int64(6n) }, true],
        [{ key: "/k", target: "value", value: int64(5n) }, false],
        [{ key: "/k", target: "value", value: str("6") }, false],
        [{ key: "/k", target: "value", op: "!=", value: int64(5n) }, true],
        [{ key: "/k", target: "exists", value: true }, true],
        [{ key: "/absent", target: "exists", value: false }, true],
        [{ key: "/absent", target: "exists", value: true }, false],
        [{ key: "/absent", target: "version", value: 0 }, true],
        [{ key: "/absent", target: "modRev", value: 0 }, true],
      ];
      for (const [compare, expected] of table)
        expect(
          await holds(compare),
          JSON.stringify(compare, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)),
        ).toBe(expected);
    });

    it("requires every compare to hold", async () => {
      const tree = await ctx.open();
      await tree.set("/a", int64(1n));
      const res = await tree.txn({
        compare: [
          { key: "/a", target: "exists", value: true },
          { key: "/b", target: "exists", value: true },
        ],
        success: [{ op: "set", key: "/s", value: str("s") }],
        failure: [{ op: "set", key: "/f", value: str("f") }],
      });
      expect(res.succeeded).toBe(false);
      expect(await tree.get("/s")).toBeUndefined();
      expect(await tree.get("/f")).toBeDefined();
    });

    it("is all or nothing: a failing operation leaves every key and the revision as they were", async () => {
      const tree = await ctx.open();
      await tree.set("/a", str("a"));
      await tree.set("/full/x", str("x"));
      await tree.set("/gone/y", str("y"));
      const before = tree.revision();
      const prefix: TxnOp[] = [
        { op: "set", key: "/a", value: str("changed") },
        { op: "set", key: "/fresh/key", value: str("new") },
        { op: "deltree", key: "/gone/" },
      ];
      const unchanged = async () => {
        expect(tree.revision()).toBe(before);
        expect(await getValue(tree, "/a")).toMatchObject({ value: str("a"), version: 1 });
        expect(await tree.get("/fresh/")).toBeUndefined();
        expect(await tree.get("/gone/y")).toBeDefined();
        expect(await tree.get("/full/x")).toBeDefined();
      };
      await expectTreeError(
        () => tree.txn({ success: [...prefix, { op: "del", key: "/full/" }] }),
        "TREE_NOT_EMPTY",
      );
      await unchanged();
      await expectTreeErrorOneOf(
        () => tree.txn({ success: [...prefix, { op: "set", key: "/bad//key", value: str("x") }] }),
        ["TREE_INVALID_KEY", "TREE_TXN_INVALID"],
      );
      await unchanged();
    });

    it("is all or nothing beside writes that go through at the same moment", async () => {
      const tree = await ctx.open();
      await tree.set("/shared/a", str("a"));
      await tree.set("/full/x", str("x"));
      const before = tree.revision();
      // Started together, so a tree that commits in groups takes them in one group.
      const [failed, ...others] = await Promise.allSettled([
        tree.txn({
          success: [
            { op: "set", key: "/shared/a", value: str("changed") },
            { op: "set", key: "/shared/fresh", value: str("new") },
            { op: "set", key: "/made/by/txn", value: str("new") },
            { op: "del", key: "/full/" },
          ],
        }),
        tree.set("/shared/b", str("b")),
        tree.set("/shared/a", str("set beside")),
      ]);
      expect(failed.status).toBe("rejected");
      expect(others.map((o) => o.status)).toEqual(["fulfilled", "fulfilled"]);
      expect(tree.revision()).toBe(before + 2);
      expect(await getValue(tree, "/shared/a")).toMatchObject({ value: str("set beside"), version: 2 });
      expect(await tree.get("/shared/fresh")).toBeUndefined();
      expect(await tree.get("/made/")).toBeUndefined();
      expect(await getDir(tree, "/shared/")).toMatchObject({ count: 2 });
      expect(await getDir(tree, "/")).toMatchObject({ count: 2 }); // /shared/ and /full/
    });

    it("refuses a malformed request with TREE_TXN_INVALID", async () => {
      const tree = await ctx.open();
      // Deliberately malformed at runtime, as a client over HTTP could send it.
      const bad = [
        { success: [{ op: "rename", key: "/a" }] },
        { compare: [{ key: "/a", target: "colour", value: 1 }] },
        { compare: [{ key: "/a", target: "version", op: "<=>", value: 1 }] },
      ] as unknown as TxnRequest[];
      for (const request of bad) await expectTreeError(() => tree.txn(request), "TREE_TXN_INVALID");
    });

    it("runs 100 operations in one transaction and refuses an oversized one with TREE_TXN_INVALID", async () => {
      const tree = await ctx.open();
      const ops = (n: number): TxnOp[] =>
        Array.from({ length: n }, (_v, i) => ({ op: "set", key: `/big/${i}`, value: int64(BigInt(i)) }));
      const res = await tree.txn({ success: ops(100) });
      expect((await getDir(tree, "/big/")).count).toBe(100);
      expect((await getValue(tree, "/big/99")).modRev).toBe(res.rev);
      const before = tree.revision();
      await expectTreeError(() => tree.txn({ success: ops(300) }), "TREE_TXN_INVALID");
      expect(tree.revision()).toBe(before);
    });

    it("does not bump the revision for a transaction that writes nothing", async () => {
      const tree = await ctx.open();
      await tree.set("/a", str("a"));
      const before = tree.revision();
      const res = await tree.txn({
        compare: [{ key: "/a", target: "exists", value: true }],
        success: [{ op: "get", key: "/a" }],
      });
      expect(res.succeeded).toBe(true);
      expect(res.rev).toBe(before);
      expect(tree.revision()).toBe(before);
    });

    it("runs mkindex and deltree inside a transaction", async () => {
      const tree = await ctx.open();
      await tree.set("/gone/a", str("a"));
      const res = await tree.txn({
        success: [
          { op: "deltree", key: "/gone/" },
          { op: "mkindex", key: "/made/" },
        ],
      });
      expect(res.results[0]).toMatchObject({ removed: 2 });
      expect(await tree.get("/gone/")).toBeUndefined();
      expect(await getDir(tree, "/made/")).toMatchObject({ count: 0, createRev: res.rev });
    });

    it("appends inside a transaction: dense numbers, one revision with the other writes, nothing when a compare fails", async () => {
      const tree = await ctx.open();
      await tree.append("/log/", str("zero"));
      const before = tree.revision();
      const res = await tree.txn({
        compare: [{ key: "/count", target: "version", value: 0 }],
        success: [
          { op: "append", key: "/log/", value: str("one"), vid: "run-1", ro: true },
          { op: "append", key: "/log/", value: str("two") },
          { op: "set", key: "/count", value: int64(2n) },
        ],
      });
      expect(res.succeeded).toBe(true);
      expect(res.rev).toBe(before + 1);
      expect(res.results[0]).toMatchObject({ key: "/log/1", rev: before + 1, version: 1 });
      expect(res.results[1]).toMatchObject({ key: "/log/2", rev: before + 1, version: 1 });
      expect(await getValue(tree, "/log/1")).toMatchObject({ value: str("one"), vid: "run-1", ro: true });
      expect(await getValue(tree, "/log/2")).toMatchObject({ value: str("two"), ro: false });
      const refused = await tree.txn({
        compare: [{ key: "/count", target: "version", value: 0 }],
        success: [{ op: "append", key: "/log/", value: str("lost") }],
        failure: [{ op: "get", key: "/count" }],
      });
      expect(refused.succeeded).toBe(false);
      expect(refused.results[0]).toMatchObject({ key: "/count", version: 1 });
      expect((await tree.append("/log/", str("three"))).key).toBe("/log/3");
    });
  });
}
