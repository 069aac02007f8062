import { describe, expect, it } from "vitest";
import { historyRule, MAX_HISTORY, parseHistoryLimit } from "../../tree/history-limit.js";
import { openTree } from "../../tree/index.js";
import { expectTreeError } from "./helpers.js";

describe("history limits", () => {
  it("keeps 10 under /byteseek/ but none of the usage counters, and none elsewhere by default", () => {
    const rule = historyRule();
    expect(rule.limitFor("/byteseek/prompt/system")).toBe(10);
    expect(rule.limitFor("/byteseek/tools/a/b")).toBe(10);
    expect(rule.limitFor("/byteseek/usage/run-1")).toBe(0);
    expect(rule.keepsBelow("/byteseek/usage/")).toBe(false);
    expect(rule.limitFor("/byteseekx/a")).toBe(0);
    expect(rule.limitFor("/data/a")).toBe(0);
  });

  it("answers a count for every value, whatever its directory", () => {
    const rule = historyRule(4);
    expect(rule.limitFor("/a")).toBe(4);
    expect(rule.limitFor("/byteseek/x")).toBe(4);
    expect(rule.keepsBelow("/")).toBe(true);
    expect(historyRule(0).keepsBelow("/")).toBe(false);
  });

  it("says whether a directory holds anything that keeps history, above or below it", () => {
    const rule = historyRule({ "/a/b/": 2, "/c/": 0 });
    expect(rule.keepsBelow("/")).toBe(true); // /a/b/ is below the root
    expect(rule.keepsBelow("/a/")).toBe(true);
    expect(rule.keepsBelow("/a/b/c/")).toBe(true); // inside /a/b/
    expect(rule.keepsBelow("/a/x/")).toBe(false);
    expect(rule.keepsBelow("/c/")).toBe(false);
  });

  it("refuses counts that are negative, fractional or too large, and keys that are not directories", async () => {
    for (const bad of [-1, 1.5, Number.NaN, MAX_HISTORY + 1])
      await expectTreeError(() => historyRule(bad), "TREE_INVALID_OPTION");
    for (const dir of ["/a", "a/", "/a//", "/../"])
      await expectTreeError(() => historyRule({ [dir]: 1 }), "TREE_INVALID_OPTION");
    await expectTreeError(() => historyRule({ "/a/": -2 }), "TREE_INVALID_OPTION");
  });

  it("parses a count, or dir=count pairs", async () => {
    expect(parseHistoryLimit("7")).toBe(7);
    expect(parseHistoryLimit("/a/=1,/a/b/=0")).toEqual({ "/a/": 1, "/a/b/": 0 });
    for (const bad of ["", "x", "/a/", "/a/=", "=3", "/a/=1;/b/=2"])
      await expectTreeError(() => parseHistoryLimit(bad), "TREE_INVALID_OPTION");
  });

  it("names the setting a refused limit came from", async () => {
    expect(parseHistoryLimit("/a/=2", "BYTESEEK_HISTORY")).toEqual({ "/a/": 2 });
    for (const bad of ["x", "99999999", "/a=1"]) {
      const err = await expectTreeError(
        () => parseHistoryLimit(bad, "BYTESEEK_HISTORY"),
        "TREE_INVALID_OPTION",
      );
      expect(err.message).toMatch(/^BYTESEEK_HISTORY: (history limit: |the history limit must)/);
    }
  });

  it("refuses to open a tree with an invalid limit", async () => {
    await expectTreeError(
      () => openTree({ backend: "memory", historyLimit: { "/not-a-dir": 3 } }),
      "TREE_INVALID_OPTION",
    );
  });
});
