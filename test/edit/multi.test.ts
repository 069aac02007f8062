import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMultiTool, createReplaceTool } from "../../tools/edit/index.js";
import { failure, makeWorkspace, type TestWorkspace } from "./workspace.js";

const ORIGINAL = "alpha\nbeta\ngamma\ndelta\n";

// edit.replace with edits is the shape offered to the model; edit.multi keeps it under its older name
describe.each([
  ["edit.multi", createMultiTool()],
  ["edit.replace with edits", createReplaceTool()],
])("%s", (_name, multi) => {
  let ws: TestWorkspace;
  const content = () => readFile(path.join(ws.root, "f.txt"), "utf8");
  beforeEach(async () => {
    ws = await makeWorkspace();
    await writeFile(path.join(ws.root, "f.txt"), ORIGINAL);
  });
  afterEach(() => ws.cleanup());

  it("applies every edit, matched against the original file, and says how many blocks", async () => {
    const r = await ws.call(multi, {
      path: "f.txt",
      edits: [
        { old: "delta", new: "DELTA" },
        { old: "alpha", new: "beta" }, // would make "beta" ambiguous if matched incrementally
        { old: "beta\n", new: "BETA\n" },
      ],
    });
    expect(r.text.split("\n")[0]).toBe("Replaced 3 blocks in f.txt at lines 1, 2, 4.");
    expect(await content()).toBe("beta\nBETA\ngamma\nDELTA\n");
  });

  it("accepts edits that touch but do not overlap", async () => {
    await ws.call(multi, {
      path: "f.txt",
      edits: [
        { old: "alpha\n", new: "A\n" },
        { old: "beta", new: "B" },
      ],
    });
    expect(await content()).toBe("A\nB\ngamma\ndelta\n");
  });

  it("refuses overlapping edits, naming both, and writes nothing", async () => {
    const e = await failure(
      ws.call(multi, {
        path: "f.txt",
        edits: [
          { old: "alpha\nbeta", new: "x" },
          { old: "beta\ngamma", new: "y" },
        ],
      }),
      "overlap",
    );
    expect(e.message).toContain("edits[0].old and edits[1].old overlap");
    expect(await content()).toBe(ORIGINAL);
  });

  it("names the failing edit by index and writes nothing (all or nothing)", async () => {
    const e = await failure(
      ws.call(multi, {
        path: "f.txt",
        edits: [
          { old: "alpha", new: "ALPHA" },
          { old: "epsilon", new: "EPSILON" },
        ],
      }),
      "not_found",
    );
    expect(e.message).toMatch(/^edits\[1\]\.old was not found in f.txt/);
    expect(e.details.index).toBe(1);
    expect(await content()).toBe(ORIGINAL);
  });

  it("refuses an ambiguous edit by index", async () => {
    await writeFile(path.join(ws.root, "f.txt"), "x\nx\ny\n");
    const e = await failure(
      ws.call(multi, {
        path: "f.txt",
        edits: [
          { old: "y", new: "Y" },
          { old: "x", new: "X" },
        ],
      }),
      "ambiguous",
    );
    expect(e.message).toContain("edits[1].old occurs 2 times");
  });

  it("refuses an empty edit list with invalid_args (kind arg)", async () => {
    await failure(ws.call(multi, { path: "f.txt", edits: [] }), "invalid_args", "arg");
  });

  it("shows a dry run without writing", async () => {
    const r = await ws.call(multi, {
      path: "f.txt",
      dry: true,
      edits: [
        { old: "alpha", new: "A" },
        { old: "delta", new: "D" },
      ],
    });
    expect(r.text).toMatch(/^Dry run: would replace 2 blocks/);
    expect(await content()).toBe(ORIGINAL);
  });
});
