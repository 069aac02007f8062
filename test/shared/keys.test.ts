/**
 * The key map's readers of a key (shared/keys.ts): what the page and the CLI take from a key they
 * are shown — the run of an approval or a record, the tool a declaration's key names — instead of
 * each matching the prefix with a regular expression of its own.
 */
import { describe, expect, it } from "vitest";
import { childOf, dirs, idOf, keys, runDirs, runOf } from "../../shared/keys.js";

describe("the key map's readers", () => {
  it("reads the run of a key below a run's folder, and nothing of the family folder or another family", () => {
    expect(runOf(dirs.approvals, keys.approval("r1", 3))).toBe("r1");
    expect(runOf(dirs.approvals, keys.runApprovals("mcp:a@b"))).toBe("mcp:a@b");
    expect(runOf(dirs.records, runDirs.records("r2"))).toBe("r2");
    expect(runOf(dirs.records, `${keys.toolRecord("r2", 1)}/x`)).toBe("r2");
    expect(runOf(dirs.runs, keys.runStatus("r3"))).toBe("r3");
    // the folder itself, a value directly in it, another family that shares the letters
    expect(runOf(dirs.records, dirs.records)).toBeUndefined();
    expect(runOf(dirs.records, `${dirs.records}r2`)).toBeUndefined();
    expect(runOf(dirs.records, keys.toolAccept("edit.read"))).toBeUndefined();
    expect(runOf(dirs.approvals, keys.toolRecord("r1", 3))).toBeUndefined();
    expect(runOf(dirs.records, `${dirs.records}/x/`)).toBeUndefined();
  });

  it("reads the name of a value directly in a folder, and nothing of a directory or a deeper key", () => {
    expect(childOf(dirs.tools, keys.tool("edit.read"))).toBe("edit.read");
    expect(childOf(dirs.tools, keys.shipped("edit.read"))).toBeUndefined();
    expect(childOf(dirs.tools, dirs.tools)).toBeUndefined();
    expect(childOf(dirs.tools, `${dirs.tools}x/`)).toBeUndefined();
    expect(childOf(dirs.tools, keys.toolRecord("r1", 1))).toBeUndefined();
  });

  it("leaves `<vid>/<n>` of a per-run key, and a key outside the family as it is", () => {
    expect(idOf(dirs.approvals, keys.approval("r1", 3))).toBe("r1/3");
    expect(idOf(dirs.approvals, "r1/3")).toBe("r1/3");
  });
});
