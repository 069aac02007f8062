import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createToolNameMap, SAFE_TOOL_NAME } from "../../agent/providers/tool-names.js";
import type { ToolSchema } from "../../agent/providers/types.js";

const tool = (name: string): ToolSchema => ({ name, description: name, parameters: { type: "object" } });

describe("tool name mapping", () => {
  it("maps a dotted name to a safe one and back", () => {
    const names = createToolNameMap([tool("edit.replace"), tool("tree.get")]);
    expect(names.toSafe("edit.replace")).toBe("edit_replace");
    expect(names.fromSafe("edit_replace")).toBe("edit.replace");
    expect(names.fromSafe("tree_get")).toBe("tree.get");
  });

  it("leaves a name that is already safe as it is, even when a dotted one would sanitise to it", () => {
    const names = createToolNameMap([tool("a.b"), tool("a_b")]);
    expect(names.toSafe("a_b")).toBe("a_b");
    expect(names.toSafe("a.b")).not.toBe("a_b");
    expect(names.fromSafe(names.toSafe("a.b"))).toBe("a.b");
  });

  it("includes names used earlier in the conversation, so an old call keeps a name of its own", () => {
    const names = createToolNameMap(
      [tool("x_y")],
      [{ role: "assistant", text: "", toolCalls: [{ id: "1", name: "x.y", argsText: "{}" }] }],
    );
    expect(names.toSafe("x.y")).not.toBe("x_y");
    expect(names.fromSafe(names.toSafe("x.y"))).toBe("x.y");
  });

  it("shortens a name past 64 characters", () => {
    const long = `family.${"v".repeat(80)}`;
    const names = createToolNameMap([tool(long)]);
    expect(names.toSafe(long)).toMatch(SAFE_TOOL_NAME);
    expect(names.fromSafe(names.toSafe(long))).toBe(long);
  });

  it("returns a name it does not know unchanged", () => {
    expect(createToolNameMap([tool("a.b")]).fromSafe("made_up")).toBe("made_up");
  });

  it("is collision-proof: every set of names maps to distinct safe names that map back", () => {
    const name = fc.stringMatching(/^[a-z_.\-é]{1,70}$/);
    fc.assert(
      fc.property(fc.uniqueArray(name, { minLength: 1, maxLength: 12 }), (list) => {
        const names = createToolNameMap(list.map(tool));
        const safe = list.map((n) => names.toSafe(n));
        expect(new Set(safe).size).toBe(list.length);
        for (const [i, s] of safe.entries()) {
          expect(s).toMatch(SAFE_TOOL_NAME);
          expect(names.fromSafe(s)).toBe(list[i]);
        }
      }),
    );
  });
});
