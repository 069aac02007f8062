/** The one rule for a run id (tools/run-id.ts), and the ids made for a run started without one. */
import { describe, expect, it } from "vitest";
import { isRunId, newVid, RUN_ID_PART } from "../../tools/run-id.js";

describe("run ids", () => {
  it("are tree key segments: letters, digits and _.:@-, not starting with a mark, at most 128", () => {
    for (const ok of ["r1", "mcp-claude-3", "a.b:c@d_e", "x".repeat(128)]) expect(isRunId(ok), ok).toBe(true);
    for (const bad of ["", "-r", ".r", "a/b", "a b", "x".repeat(129), "‥pc", 42])
      expect(isRunId(bad), String(bad)).toBe(false);
    expect(new RegExp(`^/byteseek/tool/(${RUN_ID_PART})/$`).exec("/byteseek/tool/mcp-x-1/")?.[1]).toBe(
      "mcp-x-1",
    );
  });

  it("made fresh are valid and differ from one call to the next", () => {
    const made = Array.from({ length: 50 }, () => newVid());
    for (const vid of made) expect(isRunId(vid), vid).toBe(true);
    expect(new Set(made).size).toBe(made.length);
  });
});
