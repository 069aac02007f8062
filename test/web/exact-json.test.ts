// The page's JSON reader (web/src/exact-json.ts) runs in Node as it does in the browser: no DOM.
import { describe, expect, it } from "vitest";
import { lineColumn, parseJson } from "../../web/src/exact-json.js";

describe("the page's exact JSON reader", () => {
  it("reads what JSON.parse reads", () => {
    const text = '{"a": [1, -2.5e3, true, false, null], "b": {"c": "x\\n\\u00e9\\"/"}, "": 0}';
    expect(parseJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it("refuses an integer beyond 2^53 by default, naming it and where it is, rather than rounding it", () => {
    const r = parseJson('{\n  "n": 9007199254740993\n}');
    expect(r).toMatchObject({ ok: false, line: 2, column: 8 });
    expect(r.ok ? "" : r.error).toBe(
      'line 2, column 8: the integer 9007199254740993 is beyond 2^53 and would be rounded to 9007199254740992; write it as a string ("9007199254740993")',
    );
    // 2^53 - 1 is exact; so is a float with a fraction or exponent (a double by its nature)
    expect(parseJson("9007199254740991")).toEqual({ ok: true, value: 9007199254740991 });
    expect(parseJson("1e300")).toEqual({ ok: true, value: 1e300 });
  });

  it("keeps an integer beyond 2^53 as its digits when asked (an int64 in an import line)", () => {
    expect(parseJson('{"value": -9223372036854775808}', { bigInt: "string" })).toEqual({
      ok: true,
      value: { value: "-9223372036854775808" },
    });
  });

  it("says at which line and column the text is wrong", () => {
    const cases: Array<[string, number, number, string]> = [
      ['{"a": 1,\n "b": 2,}', 2, 9, "a comma before }"],
      ["[1, 2", 1, 6, "the array is not closed with ]"],
      ['{"a" 1}', 1, 6, "expected :"],
      ['{"a": 1, "a": 2}', 1, 10, 'the member "a" is given twice'],
      ["[01]", 1, 3, "expected , or ]"],
      ['"tab\there"', 1, 5, "a control character inside a string"],
      ["{} x", 1, 4, "unexpected text after the JSON value"],
      ["", 1, 1, "a value is missing, the text ends"],
    ];
    for (const [text, line, column, what] of cases) {
      const r = parseJson(text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) {
        expect([r.line, r.column], text).toEqual([line, column]);
        expect(r.error, text).toContain(what);
      }
    }
  });

  it("refuses nesting deeper than the server takes", () => {
    const r = parseJson(`${"[".repeat(257)}${"]".repeat(257)}`);
    expect(r.ok ? "" : r.error).toContain("nested deeper than 256 levels");
    expect(parseJson(`${"[".repeat(256)}${"]".repeat(256)}`).ok).toBe(true);
  });

  it("counts lines and columns from 1", () => {
    expect(lineColumn("ab\ncd", 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn("ab\ncd", 4)).toEqual({ line: 2, column: 2 });
  });
});
