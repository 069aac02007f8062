import { describe, expect, it } from "vitest";
import { type ToolUsage, UNKNOWN_TOOLS } from "../../tools/records/usage.js";
import { harness } from "./helpers.js";

describe("usage counters for names that name no tool", () => {
  it("count every made-up name under one bucket, so the usage node stays small", async () => {
    const h = await harness("memory", { usageWrites: "await" });
    try {
      const names = Array.from({ length: 200 }, (_, i) => `made.up${i}_${"x".repeat(40)}`);
      for (const name of names) {
        const r = await h.runtime.call(name, {}, { vid: "ghost" });
        expect(r.details.code).toBe("unknown_tool");
      }
      await h.runtime.call("not a name at all", {}, { vid: "ghost" });
      await h.runtime.call("test.noop", {}, { vid: "ghost" });
      const node = (await h.tree.get("/byteseek/usage/ghost")) as unknown as { value: { value: ToolUsage } };
      const usage = node.value.value;
      expect(Object.keys(usage.tools).sort()).toEqual([UNKNOWN_TOOLS, "test.noop"].sort());
      expect(usage.tools[UNKNOWN_TOOLS]).toMatchObject({ calls: 201, kinds: { vet: 201 } });
      expect(usage.calls).toBe(202);
      expect(JSON.stringify(usage).length).toBeLessThan(1000);
    } finally {
      await h.dispose();
    }
  });
});
