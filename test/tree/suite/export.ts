import { describe, expect, it } from "vitest";
import type { ExportEntry, HistoryEntry, Tree } from "../../../tree/types.js";
import { int64, type Json, json, str, type TreeValue, valueToJson } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, getValue, listAll } from "../helpers.js";
import { sampleValues } from "./values.js";

async function exportAll(tree: Tree, dir?: string): Promise<ExportEntry[]> {
  const out: ExportEntry[] = [];
  for await (const entry of dir === undefined ? tree.export() : tree.export(dir)) out.push(entry);
  return out;
}

const byKey = (a: ExportEntry, b: ExportEntry) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Writes one key per sample value, plus ro, vid, an empty directory and a system entry. */
async function populate(tree: Tree): Promise<Map<string, TreeValue>> {
  const written = new Map<string, TreeValue>();
  let i = 0;
  for (const v of Object.values(sampleValues)) {
    const key = `/data/${i++}`;
    await tree.set(key, v);
    written.set(key, v);
  }
  await tree.set("/meta/locked", str("ro"), { ro: true });
  await tree.set("/meta/owned", str("vid"), { vid: "run-9" });
  await tree.set("/meta/‥pc", str("system"));
  await tree.mkindex("/empty/dir/");
  return written;
}

export function exportSuite(ctx: SuiteContext): void {
  describe("export and import", () => {
    it("round-trips every kind and value exactly through NDJSON text", async () => {
      const source = await ctx.open();
      const written = await populate(source);
      const lines = (await exportAll(source)).map((e) => JSON.stringify(e));
      for (const line of lines) expect(line).not.toContain("\n");
      const target = await ctx.open();
      const res = await target.import(lines);
      expect(res.imported).toBe(lines.length);
      expect(res.rev).toBe(target.revision());
      for (const [key, v] of written) {
        const node = await getValue(target, key);
        expect(node.kind).toBe(v.kind);
        expect(node.value).toEqual(v);
      }
      expect(await getValue(target, "/meta/locked")).toMatchObject({ ro: true, value: str("ro") });
      expect(await getValue(target, "/meta/owned")).toMatchObject({ vid: "run-9" });
      expect(await getValue(target, "/meta/‥pc")).toMatchObject({ value: str("system") });
      expect((await target.list("/empty/dir/")).children).toEqual([]);
      expect((await exportAll(target)).sort(byKey)).toEqual((await exportAll(source)).sort(byKey));
    });

    it("writes int64 beyond 2^53 as decimal strings and non-finite floats as names in the JSON form", async () => {
      const tree = await ctx.open();
      await populate(tree);
      const entries = await exportAll(tree);
      for (const [i, v] of Object.values(sampleValues).entries()) {
        const entry = entries.find((e) => e.key === `/data/${i}`);
        expect(entry).toMatchObject({ kind: v.kind, value: valueToJson(v) as Json });
      }
    });

    it("exports a consistent snapshot even while writes go on", async () => {
      const tree = await ctx.open();
      for (let i = 0; i < 40; i++) await tree.set(`/snap/${i}`, int64(BigInt(i)));
      const keys: string[] = [];
      let first = true;
      for await (const entry of tree.export("/snap/")) {
        keys.push(entry.key);
        if (first) {
          first = false;
          await tree.deltree("/snap/");
          for (let i = 100; i < 110; i++) await tree.set(`/snap/${i}`, int64(BigInt(i)));
        }
      }
      const values = keys.filter((k) => !k.endsWith("/"));
      expect(values.sort()).toEqual(Array.from({ length: 40 }, (_v, i) => `/snap/${i}`).sort());
    });

    it("exports only the subtree of the directory asked for", async () => {
      const tree = await ctx.open();
      await tree.set("/a/x", str("x"));
      await tree.set("/a/b/y", str("y"));
      await tree.set("/ab/z", str("z"));
      await tree.set("/a", str("beside"));
      const keys = (await exportAll(tree, "/a/")).map((e) => e.key);
      expect(keys).toEqual(expect.arrayContaining(["/a/x", "/a/b/y"]));
      for (const key of keys) expect(key.startsWith("/a/")).toBe(true);
    });

    it("imports entries given as objects, creating parents, in one revision", async () => {
      const tree = await ctx.open();
      const before = tree.revision();
      const res = await tree.import([
        { key: "/i/a", kind: "int64", value: "-9223372036854775808" },
        { key: "/i/b/c", kind: "float64", value: "NaN" },
        { key: "/i/d/", kind: "index" },
      ]);
      expect(res.imported).toBe(3);
      expect(res.rev).toBe(before + 1);
      expect((await getValue(tree, "/i/a")).modRev).toBe(res.rev);
      expect((await getValue(tree, "/i/a")).value).toEqual({ kind: "int64", value: -(2n ** 63n) });
      expect(Number.isNaN((await getValue(tree, "/i/b/c")).value.value)).toBe(true);
      expect((await listAll(tree, "/i/")).map((c) => c.name)).toEqual(["a", "b/", "d/"]);
    });

    it.each([
      ["invalid JSON", "{not json"],
      ["an invalid key", JSON.stringify({ key: "/bad//key", kind: "char/utf8", value: "x" })],
      ["an unknown kind", JSON.stringify({ key: "/k", kind: "text", value: "x" })],
      ["an int64 out of range", JSON.stringify({ key: "/k", kind: "int64", value: "9223372036854775808" })],
      ["a value of the wrong type for its kind", JSON.stringify({ key: "/k", kind: "bool", value: "yes" })],
      ["a missing key", JSON.stringify({ kind: "bool", value: true })],
    ])("imports nothing and names the line when line 3 has %s", async (_what, bad) => {
      const tree = await ctx.open();
      await tree.set("/existing", str("kept"));
      const before = tree.revision();
      const lines = [
        JSON.stringify({ key: "/imp/1", kind: "char/utf8", value: "one" }),
        JSON.stringify({ key: "/existing", kind: "char/utf8", value: "overwritten?" }),
        bad,
        JSON.stringify({ key: "/imp/4", kind: "char/utf8", value: "four" }),
      ];
      const err = await expectTreeError(() => tree.import(lines), "TREE_IMPORT_FAILED");
      expect(err.message).toMatch(/line 3\b/);
      expect(tree.revision()).toBe(before);
      expect(await tree.get("/imp/1")).toBeUndefined();
      expect(await tree.get("/imp/")).toBeUndefined();
      expect((await getValue(tree, "/existing")).value).toEqual(str("kept"));
    });

    it("leaves a read-only key alone unless forced, importing nothing and naming the line", async () => {
      const tree = await ctx.open();
      await tree.set("/ro/locked", str("policy"), { ro: true });
      const before = tree.revision();
      const lines = [
        JSON.stringify({ key: "/ro/other", kind: "char/utf8", value: "x" }),
        JSON.stringify({ key: "/ro/locked", kind: "char/utf8", value: "rewritten" }),
      ];
      const err = await expectTreeError(() => tree.import(lines), "TREE_READ_ONLY");
      expect(err.message).toMatch(/line 2\b/);
      expect(err.details).toMatchObject({ key: "/ro/locked", line: 2 });
      expect(tree.revision()).toBe(before);
      expect(await tree.get("/ro/other")).toBeUndefined();
      expect((await getValue(tree, "/ro/locked")).value).toEqual(str("policy"));
      // Forced: written, and a line without `ro` keeps the key's flag; a line's own `ro` is written.
      await tree.import([...lines, JSON.stringify({ key: "/ro/new", kind: "int64", value: 1, ro: true })], {
        force: true,
      });
      expect(await getValue(tree, "/ro/locked")).toMatchObject({ ro: true, value: str("rewritten") });
      expect((await getValue(tree, "/ro/new")).ro).toBe(true);
      await tree.import([JSON.stringify({ key: "/ro/new", kind: "int64", value: 2, ro: false })], {
        force: true,
      });
      expect((await getValue(tree, "/ro/new")).ro).toBe(false);
    });

    it("keeps each value's version, ro flag and history (a deleted version too) through export and import", async () => {
      const source = await ctx.open();
      const p = "/byteseek/prompt/p";
      const gone = "/byteseek/prompt/gone";
      await source.set(p, str("v1"));
      await source.set(p, json({ v: 2 }));
      await source.set(p, str("v3"), { ro: true });
      await source.set(gone, str("g1"));
      await source.del(gone);
      await source.set(gone, str("g2"));
      const lines = (await exportAll(source)).map((e) => JSON.stringify(e));
      expect(lines.find((l) => l.includes(`"${p}"`))).toContain('"history"');
      const target = await ctx.open();
      // The key had a past here too: the line's replaces it.
      await target.set(p, str("here 1"));
      await target.set(p, str("here 2"));
      await target.import(lines);
      const withoutRev = (h: HistoryEntry[]) => h.map(({ modRev: _r, ...rest }) => rest);
      for (const key of [p, gone]) {
        const { createRev: _c, modRev: _m, mtime: _t, ...was } = await getValue(source, key);
        expect(await getValue(target, key)).toMatchObject(was);
        expect(withoutRev(await target.history(key))).toEqual(withoutRev(await source.history(key)));
        // Revisions are the exporting store's: an imported version says it came from before this one.
        expect((await target.history(key)).map((h) => h.modRev)).toEqual(
          (await source.history(key)).map(() => 0),
        );
      }
      expect((await target.history(gone))[0]).toMatchObject({ value: str("g1"), deleted: true });
      expect((await exportAll(target)).sort(byKey)).toEqual((await exportAll(source)).sort(byKey));
      // Writes go on from the imported version, and history grows on top of the imported one.
      const next = await target.set(p, str("v4"), { force: true, ifVersion: 3 });
      expect(next.version).toBe(4);
      expect((await target.history(p)).map((h) => [h.version, h.modRev > 0])).toEqual([
        [3, true],
        [2, false],
        [1, false],
      ]);
    });

    it("keeps only as many imported versions as this store keeps for the key", async () => {
      const tree = await ctx.open({ historyLimit: 2 });
      const history = [1, 2, 3, 4].map((v) => ({ kind: "int64", value: v, version: v, mtime: 1000 + v }));
      await tree.import([JSON.stringify({ key: "/h/k", kind: "int64", value: 5, version: 5, history })]);
      expect(await getValue(tree, "/h/k")).toMatchObject({ version: 5, value: int64(5n) });
      expect((await tree.history("/h/k")).map((h) => h.version)).toEqual([4, 3]);
    });

    it.each([
      ["a version that is not a positive integer", { version: 0 }],
      ["history that is not a list", { version: 2, history: "v1" }],
      [
        "a previous version numbered 0",
        { version: 2, history: [{ kind: "bool", value: true, version: 0, mtime: 1 }] },
      ],
      [
        "a previous version of an unknown kind",
        { version: 2, history: [{ kind: "text", value: "x", version: 1, mtime: 1 }] },
      ],
      [
        "a previous value wrong for its kind",
        { version: 2, history: [{ kind: "bool", value: "yes", version: 1, mtime: 1 }] },
      ],
    ])("imports nothing and names the line and field when a line has %s", async (_what, extra) => {
      const tree = await ctx.open();
      const before = tree.revision();
      const lines = [
        JSON.stringify({ key: "/imp/1", kind: "char/utf8", value: "one" }),
        JSON.stringify({ key: "/imp/2", kind: "bool", value: false, ...extra }),
      ];
      const err = await expectTreeError(() => tree.import(lines), "TREE_IMPORT_FAILED");
      expect(err.message).toMatch(/line 2\b/);
      expect(err.message).toMatch(/version|history/);
      expect(tree.revision()).toBe(before);
      expect(await tree.get("/imp/1")).toBeUndefined();
    });

    it("imports from an async iterable of lines", async () => {
      const tree = await ctx.open();
      async function* lines() {
        for (let i = 0; i < 50; i++) yield JSON.stringify({ key: `/s/${i}`, kind: "int64", value: i });
      }
      expect((await tree.import(lines())).imported).toBe(50);
      expect((await listAll(tree, "/s/")).map((c) => c.name)).toEqual(
        Array.from({ length: 50 }, (_v, i) => `${i}`),
      );
    });
  });
}
