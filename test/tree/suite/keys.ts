import { describe, expect, it } from "vitest";
import type { TreeError } from "../../../tree/errors.js";
import { str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, expectTreeErrorOneOf, getDir, getValue, names, take } from "../helpers.js";

const deep = (levels: number) => "/a".repeat(levels);

/** Invalid value-key forms, each with a directory form that is just as invalid. */
const invalidKeys: Array<[string, string, string]> = [
  ["a relative key", "a/b", "a/b/"],
  ["an empty key", "", "a/"],
  ["an empty segment (//)", "/a//b", "/a//b/"],
  ["a leading //", "//a", "//a/"],
  ["a '.' segment", "/a/./b", "/a/./"],
  ["a '..' segment", "/a/../b", "/a/../"],
  ["a trailing '.' segment", "/a/.", "/./"],
  ["a NUL character", "/a\u0000b", "/a\u0000b/"],
  ["a newline", "/a\nb", "/a\nb/"],
  ["a tab", "/a\tb", "/a\tb/"],
  ["a DEL character", "/a\u007fb", "/a\u007fb/"],
  ["a C1 control character", "/a\u0085b", "/a\u0085b/"],
  ["over 4 KiB", `/${"x".repeat(4096)}`, `/${"x".repeat(4095)}/`],
  ["over 4 KiB of UTF-8 (fewer characters)", `/${"é".repeat(2048)}`, `/${"é".repeat(2048)}/`],
  ["more than 64 levels", deep(65), `${deep(65)}/`],
];

export function keySuite(ctx: SuiteContext): void {
  describe("keys", () => {
    it.each(invalidKeys)("refuses %s with TREE_INVALID_KEY on every operation", async (_what, key, dir) => {
      const tree = await ctx.open();
      const before = tree.revision();
      const checks: Array<() => unknown> = [
        () => tree.get(key),
        () => tree.set(key, str("v")),
        () => tree.del(key),
        () => tree.history(key),
        () => tree.get(dir),
        () => tree.list(dir),
        () => tree.deltree(dir),
        () => tree.mkindex(dir),
        () => tree.append(dir, str("v")),
        () => take(tree.watch(dir, { fromRev: before + 1 }), 1),
      ];
      for (const check of checks) {
        const err: TreeError = await expectTreeError(check, "TREE_INVALID_KEY");
        expect(err.message).toMatch(/key/i);
      }
      await expectTreeErrorOneOf(
        () => tree.txn({ success: [{ op: "set", key, value: str("v") }] }),
        ["TREE_INVALID_KEY", "TREE_TXN_INVALID"],
      );
      expect(tree.revision()).toBe(before);
      expect(await names(tree, "/")).toEqual([]);
    });

    it("refuses a directory key where a value key is needed, and the reverse", async () => {
      const tree = await ctx.open();
      await expectTreeError(() => tree.set("/a/", str("v")), "TREE_INVALID_KEY");
      await expectTreeError(() => tree.list("/a"), "TREE_INVALID_KEY");
      await expectTreeError(() => tree.deltree("/a"), "TREE_INVALID_KEY");
      await expectTreeError(() => tree.mkindex("/a"), "TREE_INVALID_KEY");
      await expectTreeError(() => tree.append("/a", str("v")), "TREE_INVALID_KEY");
      await expectTreeError(() => tree.set("/", str("v")), "TREE_INVALID_KEY");
    });

    it("accepts a key of exactly 4 KiB and one of exactly 64 levels", async () => {
      const tree = await ctx.open();
      const long = `/${"x".repeat(4095)}`;
      const multibyte = `/${"é".repeat(2047)}x`;
      await tree.set(long, str("long"));
      await tree.set(multibyte, str("multibyte"));
      await tree.set(deep(64), str("deep"));
      expect((await getValue(tree, long)).value).toEqual(str("long"));
      expect((await getValue(tree, multibyte)).value).toEqual(str("multibyte"));
      expect((await getValue(tree, deep(64))).value).toEqual(str("deep"));
    });

    it("accepts names with spaces, punctuation and any non-control Unicode", async () => {
      const tree = await ctx.open();
      const keys = ["/my key", "/日本/ключ", "/emoji/😀", "/dots/...", "/dots/.hidden", "/x/a:b=c?d#e%20"];
      for (const key of keys) await tree.set(key, str(key));
      for (const key of keys) expect((await getValue(tree, key)).value).toEqual(str(key));
    });

    it("keeps /a (a value) and /a/ (a directory) as different keys that coexist", async () => {
      const tree = await ctx.open();
      await tree.set("/a", str("value"));
      await tree.set("/a/b", str("child"));
      expect((await getValue(tree, "/a")).value).toEqual(str("value"));
      expect((await getDir(tree, "/a/")).count).toBe(1);
      await tree.del("/a");
      expect(await tree.get("/a")).toBeUndefined();
      expect((await getValue(tree, "/a/b")).value).toEqual(str("child"));
      await tree.set("/a", str("again"));
      await tree.deltree("/a/");
      expect(await tree.get("/a/")).toBeUndefined();
      expect((await getValue(tree, "/a")).value).toEqual(str("again"));
    });

    it("does not confuse a key with another that has it as a string prefix", async () => {
      const tree = await ctx.open();
      await tree.set("/a/x", str("1"));
      await tree.set("/ab/x", str("2"));
      await tree.set("/a-b", str("3"));
      expect(await names(tree, "/a/")).toEqual(["x"]);
      // Ordered by bare name ("a" < "a-b" < "ab"), whatever the trailing '/'.
      expect(await names(tree, "/")).toEqual(["a/", "a-b", "ab/"]);
      const res = await tree.deltree("/a/");
      expect(res.removed).toBe(2);
      expect((await getValue(tree, "/ab/x")).value).toEqual(str("2"));
      expect((await getValue(tree, "/a-b")).value).toEqual(str("3"));
    });
  });
}
