import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grep } from "../../tree/grep.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { int64, json, str } from "../../tree/value.js";
import { expectTreeError } from "./helpers.js";

describe("grep", () => {
  let tree: Tree;
  beforeAll(async () => {
    tree = await openTree({ backend: "memory" });
    await tree.set("/g/x", str("hello\nworld hello"));
    await tree.set("/g/b/y", json({ greeting: "Hello" }));
    await tree.set("/g/hello", str("nothing"));
    await tree.set("/g/n", int64(4242n));
    await tree.set("/g/‥hidden", str("hello from bookkeeping"));
    await tree.set("/g/long", str(`${"x".repeat(500)}hello${"y".repeat(500)}`));
    await tree.set("/g/bad", str(`${"a".repeat(40)}!`));
    await tree.set("/other/x", str("hello"));
  });
  afterAll(() => tree.close());

  it("finds matching keys and lines of values below the prefix, in key order, skipping system entries", async () => {
    const res = await grep(tree, "/g/", { pattern: "hello" });
    expect(res.matches.map((m) => [m.key, m.line])).toEqual([
      ["/g/hello", undefined],
      ["/g/long", 1],
      ["/g/x", 1],
      ["/g/x", 2],
    ]);
    expect(res.next).toBeUndefined();
    expect(res.truncated).toBeUndefined();
    const long = res.matches.find((m) => m.key === "/g/long")!;
    expect(long.preview).toContain("hello");
    expect(long.preview.length).toBeLessThanOrEqual(162);
    expect(res.scanned.keys).toBe(7);
  });

  it("matches JSON and numbers as written, case-insensitively when asked, and keys or values alone", async () => {
    expect(
      (await grep(tree, "/g/", { pattern: "hello", ignoreCase: true, keys: false })).matches.map(
        (m) => m.key,
      ),
    ).toEqual(["/g/b/y", "/g/long", "/g/x", "/g/x"]);
    expect((await grep(tree, "/g/", { pattern: "424" })).matches).toEqual([
      { key: "/g/n", line: 1, preview: "4242" },
    ]);
    expect((await grep(tree, "/g/", { pattern: "hello", values: false })).matches).toEqual([
      { key: "/g/hello", preview: "/g/hello" },
    ]);
    expect((await grep(tree, "/g/", { pattern: "^wor.d", regex: true })).matches).toEqual([
      { key: "/g/x", line: 2, preview: "world hello" },
    ]);
  });

  it("stops at the limit and goes on from next to the end, each match once", async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 10; i++) {
      const res = await grep(tree, "/", { pattern: "o", limit: 2, ...(after ? { after } : {}) });
      for (const m of res.matches) seen.push(`${m.key}:${m.line ?? "key"}`);
      if (!res.next) break;
      after = res.next;
    }
    const all = (await grep(tree, "/", { pattern: "o", limit: 1000 })).matches.map(
      (m) => `${m.key}:${m.line ?? "key"}`,
    );
    expect(all.length).toBeGreaterThan(4);
    expect(seen).toEqual(all);
  });

  it("answers truncated with next when the bytes budget runs out", async () => {
    const res = await grep(tree, "/g/", { pattern: "zzz", maxBytes: 100 });
    expect(res.truncated).toBe(true);
    expect(res.next).toBeDefined();
  });

  it("refuses an invalid or empty pattern, and stops a backtracking regex on time instead of holding the server", async () => {
    await expectTreeError(() => grep(tree, "/g/", { pattern: "(", regex: true }), "TREE_INVALID_VALUE");
    await expectTreeError(() => grep(tree, "/g/", { pattern: "" }), "TREE_INVALID_VALUE");
    await expectTreeError(() => grep(tree, "/g/", { pattern: "x", after: "/other/x" }), "TREE_INVALID_VALUE");
    const err = await expectTreeError(
      () => grep(tree, "/g/", { pattern: "^(a+)+$", regex: true, maxMs: 200 }),
      "TREE_INVALID_VALUE",
    );
    expect(err.message).toMatch(/too long/);
  });
});
