import { describe, expect, it } from "vitest";
import { int64, str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectAnyTreeError, expectTreeError, getDir, getValue, listAll, names } from "../helpers.js";

export function listSuite(ctx: SuiteContext): void {
  describe("list", () => {
    it("lists direct children in natural order: all-digit names numerically first, then by code point", async () => {
      const tree = await ctx.open();
      const children = [
        "b",
        "10",
        "a",
        "2",
        "0",
        "1",
        "B",
        "_",
        "~",
        "é",
        "a1",
        "a10",
        "a2",
        "18446744073709551616",
        "18446744073709551615",
        "9",
        "\uff5a",
        "😀",
      ];
      for (const name of children) await tree.set(`/l/${name}`, str(name));
      expect(await names(tree, "/l/")).toEqual([
        "0",
        "1",
        "2",
        "9",
        "10",
        "18446744073709551615",
        "18446744073709551616",
        "B",
        "_",
        "a",
        "a1",
        "a10",
        "a2",
        "b",
        "~",
        "é",
        "\uff5a",
        "😀",
      ]);
    });

    it("lists large values whole (over HTTP the server previews them, and the client reads them)", async () => {
      const tree = await ctx.open();
      const big = "v".repeat(200 * 1024);
      await tree.set("/lb/a", str(`a${big}`));
      await tree.set("/lb/b", int64(2));
      const page = await tree.list("/lb/");
      expect(page.children.map((c) => ("value" in c ? c.value : undefined))).toEqual([
        str(`a${big}`),
        int64(2),
      ]);
    });

    it("lists directories with a trailing '/', their count, and a value before a directory of the same name", async () => {
      const tree = await ctx.open();
      await tree.set("/l/a", str("value a"));
      await tree.set("/l/a/x", str("x"));
      await tree.set("/l/a/y", str("y"));
      await tree.set("/l/10/z", str("z"));
      await tree.set("/l/10", int64(10n));
      await tree.set("/l/2", int64(2n));
      await tree.mkindex("/l/empty/");
      const list = await tree.list("/l/");
      expect(list.key).toBe("/l/");
      expect(list.next).toBeUndefined();
      expect(list.children.map((c) => c.name)).toEqual(["2", "10", "10/", "a", "a/", "empty/"]);
      const byName = new Map(list.children.map((c) => [c.name, c]));
      expect(byName.get("a/")).toMatchObject({ kind: "index", count: 2, key: "/l/a/" });
      expect(byName.get("10/")).toMatchObject({ kind: "index", count: 1, key: "/l/10/" });
      expect(byName.get("empty/")).toMatchObject({ kind: "index", count: 0 });
      expect(byName.get("a")).toMatchObject({
        kind: "char/utf8",
        key: "/l/a",
        value: str("value a"),
        version: 1,
      });
      expect(byName.get("10")).toMatchObject({ kind: "int64", value: int64(10n) });
    });

    it("leaves values out of the children with values: false", async () => {
      const tree = await ctx.open();
      await tree.set("/l/a", str("a"));
      await tree.set("/l/d/x", str("x"));
      const list = await tree.list("/l/", { values: false });
      expect(list.children.map((c) => c.name)).toEqual(["a", "d/"]);
      expect(list.children[0]).not.toHaveProperty("value");
      expect(list.children[0]).toMatchObject({ kind: "char/utf8", version: 1 });
    });

    it("paginates with limit, after and next, and next is absent on the last page", async () => {
      const tree = await ctx.open();
      for (let i = 0; i < 25; i++) await tree.set(`/p/${i}`, int64(BigInt(i)));
      const first = await tree.list("/p/", { limit: 10 });
      expect(first.children.map((c) => c.name)).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
      expect(first.next).toBe("9");
      const second = await tree.list("/p/", { limit: 10, after: first.next });
      expect(second.children.map((c) => c.name)).toEqual([
        "10",
        "11",
        "12",
        "13",
        "14",
        "15",
        "16",
        "17",
        "18",
        "19",
      ]);
      const third = await tree.list("/p/", { limit: 10, after: second.next });
      expect(third.children.map((c) => c.name)).toEqual(["20", "21", "22", "23", "24"]);
      expect(third.next).toBeUndefined();
      const exact = await tree.list("/p/", { limit: 5, after: "19" });
      expect(exact.children).toHaveLength(5);
      expect(exact.next).toBeUndefined();
    });

    it("starts after a name that is not there at the place it would be", async () => {
      const tree = await ctx.open();
      for (const name of ["1", "3", "20", "b", "d"]) await tree.set(`/p/${name}`, str(name));
      expect((await tree.list("/p/", { after: "2" })).children.map((c) => c.name)).toEqual([
        "3",
        "20",
        "b",
        "d",
      ]);
      expect((await tree.list("/p/", { after: "100" })).children.map((c) => c.name)).toEqual(["b", "d"]);
      expect((await tree.list("/p/", { after: "c" })).children.map((c) => c.name)).toEqual(["d"]);
      expect((await tree.list("/p/", { after: "z" })).children).toEqual([]);
    });

    it("pages through a value and a directory of the same name, after naming either", async () => {
      const tree = await ctx.open();
      await tree.set("/p/a", str("v"));
      await tree.set("/p/a/x", str("x"));
      await tree.set("/p/b", str("b"));
      expect((await tree.list("/p/", { after: "a" })).children.map((c) => c.name)).toEqual(["a/", "b"]);
      expect((await tree.list("/p/", { after: "a/" })).children.map((c) => c.name)).toEqual(["b"]);
      const pages: string[][] = [];
      let after: string | undefined;
      do {
        const page = await tree.list("/p/", { limit: 1, ...(after === undefined ? {} : { after }) });
        pages.push(page.children.map((c) => c.name));
        after = page.next;
      } while (after !== undefined && pages.length < 10);
      expect(pages.flat()).toEqual(["a", "a/", "b"]);
    });

    it("refuses a limit that is not a positive integer", async () => {
      const tree = await ctx.open();
      for (let i = 0; i < 3; i++) await tree.set(`/p/${i}`, int64(BigInt(i)));
      for (const limit of [0, -1, 1.5, Number.NaN])
        await expectAnyTreeError(() => tree.list("/p/", { limit }));
    });

    it("returns at most 1000 children by default", async () => {
      const tree = await ctx.open();
      await tree.import(
        Array.from({ length: 1001 }, (_v, i) => ({ key: `/many/${i}`, kind: "int64" as const, value: i })),
      );
      const page = await tree.list("/many/");
      expect(page.children).toHaveLength(1000);
      expect(page.next).toBe("999");
      expect((await tree.list("/many/", { after: page.next })).children.map((c) => c.name)).toEqual(["1000"]);
    });

    it("hides system entries (names starting with ‥) from list, but get sees them and count includes them", async () => {
      const tree = await ctx.open();
      await tree.set("/vthread/r1/status", str("running"));
      await tree.set("/vthread/r1/‥pc", str("/byteseek/tool/r1/3"));
      await tree.set("/vthread/r1/‥sys/inner", str("hidden dir"));
      expect(await names(tree, "/vthread/r1/")).toEqual(["status"]);
      expect(await names(tree, "/vthread/r1/", { system: true })).toEqual(["status", "‥pc", "‥sys/"]);
      expect((await getValue(tree, "/vthread/r1/‥pc")).value).toEqual(str("/byteseek/tool/r1/3"));
      expect((await getDir(tree, "/vthread/r1/")).count).toBe(3);
      expect(await names(tree, "/vthread/r1/‥sys/")).toEqual(["inner"]);
      // A name that merely contains ‥ is not a system entry.
      await tree.set("/vthread/r1/a‥b", str("visible"));
      expect(await names(tree, "/vthread/r1/")).toEqual(["a‥b", "status"]);
    });

    it("lists an empty root of a fresh tree, and refuses an absent directory with TREE_NOT_FOUND", async () => {
      const tree = await ctx.open();
      expect((await tree.list("/")).children).toEqual([]);
      await expectTreeError(() => tree.list("/absent/"), "TREE_NOT_FOUND");
      await tree.set("/value", str("v"));
      await expectTreeError(() => tree.list("/value/"), "TREE_NOT_FOUND");
    });

    it("reflects deletes and re-creations in the listing and the counts", async () => {
      const tree = await ctx.open();
      for (const n of ["a", "b", "c"]) await tree.set(`/r/${n}`, str(n));
      await tree.del("/r/b");
      expect(await names(tree, "/r/")).toEqual(["a", "c"]);
      expect((await getDir(tree, "/r/")).count).toBe(2);
      await tree.set("/r/b/child", str("now a directory"));
      expect(await names(tree, "/r/")).toEqual(["a", "b/", "c"]);
      expect((await listAll(tree, "/")).map((c) => [c.name, c.kind === "index" ? c.count : -1])).toEqual([
        ["r/", 3],
      ]);
    });
  });
}
