import { describe, expect, it } from "vitest";
import type { SuiteContext } from "../context.js";

export function lifecycleSuite(ctx: SuiteContext): void {
  describe("lifecycle", () => {
    it("starts empty, with list('/') answering no children", async () => {
      const tree = await ctx.open();
      expect((await tree.list("/")).children).toEqual([]);
      expect(tree.revision()).toBeGreaterThanOrEqual(0);
      expect(tree.compactedRev()).toBeLessThanOrEqual(tree.revision() + 1);
    });
  });
}
