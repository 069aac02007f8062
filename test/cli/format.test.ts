import { describe, expect, it } from "vitest";
import {
  drawTree,
  formatBytes,
  formatExportLine,
  formatGetLine,
  formatHeadLine,
  formatHistoryLine,
  formatListLine,
  formatProgress,
  formatWatchLine,
  type TreeDrawNode,
} from "../../cli/format.js";
import type { DirNode, ValueNode } from "../../tree/types.js";
import { bool, float64, int64, json, str } from "../../tree/value.js";

const meta = { version: 3, createRev: 2, modRev: 7, mtime: 0, ro: false };
const valueNode = (key: string, value: ValueNode["value"], ro = false): ValueNode => ({
  ...meta,
  key,
  kind: value.kind,
  value,
  ro,
});
const dirNode = (key: string, count: number): DirNode => ({ ...meta, key, kind: "index", count });

describe("kvspace value printing", () => {
  it("prints get lines as key, TAB, kind:value", () => {
    expect(formatGetLine("/i", valueNode("/i", int64(-9223372036854775808n)))).toBe(
      "/i\tint64:-9223372036854775808",
    );
    expect(formatGetLine("/f", valueNode("/f", float64(2)))).toBe("/f\tfloat64:2.0");
    expect(formatGetLine("/b", valueNode("/b", bool(false)))).toBe("/b\tbool:false");
    expect(formatGetLine("/s", valueNode("/s", str("a\tb")))).toBe("/s\tchar/utf8:a\tb");
    expect(formatGetLine("/j", valueNode("/j", json({ a: [1, null] })))).toBe('/j\tjson:{"a":[1,null]}');
  });

  it("prints (nil) for an absent key and index:(N) for a directory", () => {
    expect(formatGetLine("/x", undefined)).toBe("/x\t(nil)");
    expect(formatGetLine("/d/", dirNode("/d/", 4))).toBe("/d/\tindex:(4)");
  });

  it("prints head lines with ro as 0 or 1 and the three counters", () => {
    expect(formatHeadLine("/r", valueNode("/r", int64(1), true))).toBe(
      "/r\tint64\tro=1\tversion=3\tcreateRev=2\tmodRev=7",
    );
    expect(formatHeadLine("/d/", dirNode("/d/", 0))).toBe(
      "/d/\tindex\tro=0\tversion=3\tcreateRev=2\tmodRev=7",
    );
    expect(formatHeadLine("/x", undefined)).toBe("/x\t(nil)");
  });
});

describe("kvspace list lines", () => {
  const value = { ...valueNode("/d/n", float64(0.5)), name: "n" };
  const dir = { ...dirNode("/d/sub/", 12), name: "sub/" };

  it("prints name, kind and value, a directory with its count", () => {
    expect(formatListLine(value)).toBe("n\tfloat64\t0.5");
    expect(formatListLine(dir)).toBe("sub/\tindex\t(12)");
  });

  it("leaves the kind out with kind: false", () => {
    expect(formatListLine(value, { kind: false })).toBe("n\t0.5");
    expect(formatListLine(dir, { kind: false })).toBe("sub/\t(12)");
  });
});

describe("kvspace tree drawing", () => {
  const nodes: TreeDrawNode[] = [
    { name: "b/", kind: "index", children: [{ name: "10", kind: "int64", value: int64(10) }] },
    { name: "b", kind: "char/utf8", value: str("beside") },
    {
      name: "a/",
      kind: "index",
      children: [
        { name: "x", kind: "bool", value: bool(true) },
        { name: "10", kind: "int64", value: int64(10) },
        { name: "9", kind: "int64", value: int64(9) },
        { name: "e/", kind: "index", children: [] },
      ],
    },
  ];

  it("draws names in natural order, a value before a directory of the same name", () => {
    expect(drawTree("/", nodes).join("\n")).toBe(
      [
        "/",
        "├── a/",
        "│   ├── 9\t9",
        "│   ├── 10\t10",
        "│   ├── e/",
        "│   └── x\ttrue",
        "├── b\tbeside",
        "└── b/",
        "    └── 10\t10",
      ].join("\n"),
    );
  });

  it("shows kinds only when asked", () => {
    expect(drawTree("/t/", [{ name: "n", kind: "float64", value: float64(1) }], { kind: true })).toEqual([
      "/t/",
      "└── n\tfloat64\t1.0",
    ]);
  });

  it("draws an empty directory as its name alone", () => {
    expect(drawTree("/empty/", [])).toEqual(["/empty/"]);
  });
});

describe("kvspace watch, history and export lines", () => {
  it("prints rev, type, key and kind:value for a put; no value for deletes", () => {
    expect(
      formatWatchLine({ type: "put", key: "/a", kind: "int64", value: int64(5), rev: 9, prevRev: 0 }),
    ).toBe("9\tput\t/a\tint64:5");
    expect(formatWatchLine({ type: "put", key: "/d/", kind: "index", rev: 9, prevRev: 0 })).toBe(
      "9\tput\t/d/\tindex",
    );
    expect(formatWatchLine({ type: "delete", key: "/a", rev: 10, prevRev: 9 })).toBe("10\tdelete\t/a");
    expect(formatWatchLine({ type: "deltree", key: "/d/", rev: 11, prevRev: 9 })).toBe("11\tdeltree\t/d/");
  });

  it("prints history entries with their version and modRev, marking the deleted one", () => {
    const entry = { key: "/a", kind: "int64" as const, value: int64(1), version: 2, modRev: 5, mtime: 0 };
    expect(formatHistoryLine(entry)).toBe("/a\tversion=2\tmodRev=5\tint64:1");
    expect(formatHistoryLine({ ...entry, deleted: true })).toBe("/a\tversion=2\tmodRev=5\tint64:1\tdeleted");
  });

  it("prints export entries as compact JSON", () => {
    expect(formatExportLine({ key: "/a", kind: "json", value: { b: [1] }, ro: true })).toBe(
      '{"key":"/a","kind":"json","value":{"b":[1]},"ro":true}',
    );
  });
});

describe("kvspace import progress", () => {
  it("draws a bar with the percentage and sizes", () => {
    expect(formatProgress(512, 1024, 10)).toBe("[#####-----]  50%  512 B / 1.0 KB");
    expect(formatProgress(3 * 1024 * 1024, 3 * 1024 * 1024, 4)).toBe("[####] 100%  3.0 MB / 3.0 MB");
  });

  it("shows what was read when the size is unknown (stdin)", () => {
    expect(formatProgress(1536, undefined)).toBe("1.5 KB read");
  });

  it("prints sizes in B, KB, MB and GB", () => {
    expect([formatBytes(0), formatBytes(1023), formatBytes(1024), formatBytes(5 * 1024 ** 3)]).toEqual([
      "0 B",
      "1023 B",
      "1.0 KB",
      "5.0 GB",
    ]);
  });
});
