/**
 * Value exactness (tree/exact.ts): a value read from JSON whose long integers were kept as bigints
 * is stored exactly or refused with TREE_INEXACT_NUMBER, never changed silently. Over HTTP the same
 * refusals answer 400 HTTP_INEXACT_NUMBER (test/server/precision.test.ts).
 */
import { describe, expect, it } from "vitest";
import { isTreeError } from "../../tree/errors.js";
import { checkInexactDouble, exactInt64, exactJson, exactValue } from "../../tree/exact.js";

/** The code and details `f` throws with. */
function refusal(f: () => unknown): { code: string; details: Record<string, unknown> } | undefined {
  try {
    f();
    return undefined;
  } catch (err) {
    if (!isTreeError(err)) throw err;
    return { code: err.code, details: err.details };
  }
}

describe("value exactness", () => {
  it("keeps an integer beyond 2^53 as an exact int64, inferred or asked for", () => {
    expect(exactValue(undefined, 9007199254740993n)).toEqual({ kind: "int64", value: 9007199254740993n });
    expect(exactValue("int64", -9223372036854775808n)).toEqual({ kind: "int64", value: -(2n ** 63n) });
    expect(exactInt64(2n ** 63n - 1n)).toBe(2n ** 63n - 1n);
  });

  it("refuses an int64 out of its range, never clamps it, naming the value", () => {
    for (const b of [2n ** 63n, -(2n ** 63n) - 1n]) {
      expect(refusal(() => exactValue(undefined, b))).toEqual({
        code: "TREE_INEXACT_NUMBER",
        details: { value: b.toString() },
      });
      expect(refusal(() => exactValue("int64", b))?.code).toBe("TREE_INEXACT_NUMBER");
    }
  });

  it("rounds a bigint only where a float64 is asked for", () => {
    expect(exactValue("float64", 9007199254740993n)).toEqual({ kind: "float64", value: 9007199254740992 });
  });

  it("refuses an integer beyond 2^53 inside a json value, naming where it sits", () => {
    expect(refusal(() => exactValue(undefined, { a: [1, { b: 9007199254740993n }] }))).toEqual({
      code: "TREE_INEXACT_NUMBER",
      details: { at: "value.a[1].b", value: "9007199254740993" },
    });
    expect(refusal(() => exactJson([2n ** 60n], "body"))?.details.at).toBe("body[0]");
    expect(exactValue("json", { a: 9007199254740991, b: 0.5 })).toEqual({
      kind: "json",
      value: { a: 9007199254740991, b: 0.5 },
    });
  });

  it("refuses a number written with a fraction or exponent that lands beyond 2^53, and keeps others as they are", () => {
    expect(refusal(() => exactValue(undefined, 9.007199254740992e15))?.code).toBe("TREE_INEXACT_NUMBER");
    expect(refusal(() => checkInexactDouble(2 ** 60))?.code).toBe("TREE_INEXACT_NUMBER");
    expect(exactValue(undefined, 2.5)).toEqual({ kind: "float64", value: 2.5 });
    expect(exactValue(undefined, 42)).toEqual({ kind: "int64", value: 42n });
  });

  it("leaves other mistakes to the value kinds' own check (TREE_INVALID_VALUE)", () => {
    expect(refusal(() => exactValue("int64", 1.5))?.code).toBe("TREE_INVALID_VALUE");
    expect(refusal(() => exactValue("nope", 1))?.code).toBe("TREE_INVALID_VALUE");
  });
});
