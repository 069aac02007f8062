import { describe, expect, it } from "vitest";
import type { Json, TreeValue } from "../../../tree/value.js";
import { bool, float64, INT64_MAX, INT64_MIN, int64, json, str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, expectTreeErrorOneOf, getValue } from "../helpers.js";

/** One value of every kind worth telling apart, keyed by a readable name. */
export const sampleValues: Record<string, TreeValue> = {
  "int64 zero": int64(0n),
  "int64 -1": int64(-1n),
  "int64 min (-2^63)": int64(INT64_MIN),
  "int64 max (2^63-1)": int64(INT64_MAX),
  "int64 2^53+1 (beyond a double)": int64(2n ** 53n + 1n),
  "int64 -(2^53+1)": int64(-(2n ** 53n) - 1n),
  "float64 3.5": float64(3.5),
  "float64 0.1": float64(0.1),
  "float64 integral 2.0": float64(2),
  "float64 largest": float64(Number.MAX_VALUE),
  "float64 smallest subnormal": float64(Number.MIN_VALUE),
  "float64 NaN": float64(Number.NaN),
  "float64 Infinity": float64(Number.POSITIVE_INFINITY),
  "float64 -Infinity": float64(Number.NEGATIVE_INFINITY),
  "bool true": bool(true),
  "bool false": bool(false),
  "empty string": str(""),
  "string with NUL, newline and tab": str("a\u0000b\nc\td"),
  "string with astral characters": str("héllo 😀 日本"),
  "string that looks like a number": str("42"),
  "json object": json({ name: "edit.replace", params: { type: "object" }, n: 1.5, ok: true, none: null }),
  "json array": json([1, "two", [3], { four: 4 }]),
  "json empty object": json({}),
  "json empty array": json([]),
};

export function valueSuite(ctx: SuiteContext): void {
  describe("values", () => {
    it.each(Object.entries(sampleValues))(
      "stores and returns %s exactly, with its kind",
      async (_name, v) => {
        const tree = await ctx.open();
        await tree.set("/v", v);
        const node = await getValue(tree, "/v");
        expect(node.kind).toBe(v.kind);
        expect(node.value).toEqual(v);
        expect(typeof node.value.value).toBe(typeof v.value);
      },
    );

    it("keeps the sign of float64 -0", async () => {
      const tree = await ctx.open();
      await tree.set("/z", float64(-0));
      expect(Object.is((await getValue(tree, "/z")).value.value, -0)).toBe(true);
    });

    it("keeps a float64 that holds an integer a float64 (2.0 is not int64 2)", async () => {
      const tree = await ctx.open();
      await tree.set("/f", float64(2));
      await tree.set("/i", int64(2n));
      expect((await getValue(tree, "/f")).kind).toBe("float64");
      expect((await getValue(tree, "/i")).value).toEqual({ kind: "int64", value: 2n });
    });

    it("lets a key change kind on a later write", async () => {
      const tree = await ctx.open();
      await tree.set("/k", int64(1n));
      await tree.set("/k", json({ a: [1] }));
      const node = await getValue(tree, "/k");
      expect(node.value).toEqual(json({ a: [1] }));
      expect(node.version).toBe(2);
    });

    it("refuses malformed values with TREE_INVALID_VALUE and writes nothing", async () => {
      const tree = await ctx.open();
      // These are deliberately not TreeValues: they are what a careless caller passes at runtime.
      const bad = [
        { kind: "int64", value: 2n ** 63n },
        { kind: "int64", value: -(2n ** 63n) - 1n },
        { kind: "int64", value: 5 },
        { kind: "float64", value: "3.5" },
        { kind: "bool", value: "true" },
        { kind: "char/utf8", value: "lone \ud800 surrogate" },
        { kind: "char/utf8", value: 7 },
        { kind: "text", value: "x" },
      ] as unknown as TreeValue[];
      const before = tree.revision();
      for (const v of bad) {
        await expectTreeError(() => tree.set("/bad", v), "TREE_INVALID_VALUE");
        await expectTreeError(() => tree.append("/badq/", v), "TREE_INVALID_VALUE");
      }
      expect(tree.revision()).toBe(before);
      expect(await tree.get("/bad")).toBeUndefined();
      expect(await tree.get("/badq/")).toBeUndefined();
    });

    it("refuses json values that JSON cannot hold exactly with TREE_INVALID_VALUE", async () => {
      const tree = await ctx.open();
      // Deliberately not Json: what a careless caller passes at runtime.
      const bad = [
        undefined,
        { a: 1n },
        { f: () => 1 },
        { n: Number.NaN },
        [Number.POSITIVE_INFINITY],
        [undefined],
        { u: undefined },
      ] as unknown as Json[];
      for (const [i, v] of bad.entries()) {
        await expectTreeError(() => tree.set(`/j${i}`, json(v)), "TREE_INVALID_VALUE");
        expect(await tree.get(`/j${i}`)).toBeUndefined();
      }
    });

    it("accepts a value of exactly 1 MiB by default and refuses one byte more with TREE_VALUE_TOO_LARGE", async () => {
      const tree = await ctx.open();
      const mib = 1024 * 1024;
      await tree.set("/big", str("x".repeat(mib)));
      expect(((await getValue(tree, "/big")).value.value as string).length).toBe(mib);
      const before = tree.revision();
      const err = await expectTreeError(
        () => tree.set("/bigger", str("x".repeat(mib + 1))),
        "TREE_VALUE_TOO_LARGE",
      );
      expect(err.message).toMatch(/1048576|1 ?MiB|1024 ?KiB/);
      await expectTreeError(() => tree.set("/bigger", json({ s: "x".repeat(mib) })), "TREE_VALUE_TOO_LARGE");
      // Multi-byte characters count in bytes, not characters.
      await expectTreeError(() => tree.set("/bigger", str("é".repeat(mib / 2 + 1))), "TREE_VALUE_TOO_LARGE");
      expect(await tree.get("/bigger")).toBeUndefined();
      expect(tree.revision()).toBe(before);
    });

    it("applies the maxValueBytes option to set, append, txn and import", async () => {
      const tree = await ctx.open({ maxValueBytes: 64 });
      await tree.set("/ok", str("y".repeat(64)));
      await expectTreeError(() => tree.set("/no", str("y".repeat(65))), "TREE_VALUE_TOO_LARGE");
      await expectTreeError(() => tree.append("/q/", str("y".repeat(65))), "TREE_VALUE_TOO_LARGE");
      const before = tree.revision();
      await expectTreeError(
        () =>
          tree.txn({
            success: [
              { op: "set", key: "/t1", value: str("small") },
              { op: "set", key: "/t2", value: str("y".repeat(65)) },
            ],
          }),
        "TREE_VALUE_TOO_LARGE",
      );
      expect(await tree.get("/t1")).toBeUndefined();
      await expectTreeErrorOneOf(
        () => tree.import([{ key: "/i", kind: "char/utf8", value: "y".repeat(65) }]),
        ["TREE_IMPORT_FAILED", "TREE_VALUE_TOO_LARGE"],
      );
      expect(await tree.get("/i")).toBeUndefined();
      expect(tree.revision()).toBe(before);
    });
  });
}
