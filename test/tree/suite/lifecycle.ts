import { describe, expect, it } from "vitest";
import { str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError } from "../helpers.js";

export function lifecycleSuite(ctx: SuiteContext): void {
  describe("lifecycle", () => {
    it("starts empty, with list('/') answering no children", async () => {
      const tree = await ctx.open();
      expect((await tree.list("/")).children).toEqual([]);
      expect(tree.revision()).toBeGreaterThanOrEqual(0);
      expect(tree.compactedRev()).toBeLessThanOrEqual(tree.revision() + 1);
    });

    it("refuses every operation with TREE_CLOSED after close, and a second close is harmless", async () => {
      const tree = await ctx.open();
      await tree.set("/a", str("a"));
      await tree.close();
      await tree.close();
      await expectTreeError(() => tree.get("/a"), "TREE_CLOSED");
      await expectTreeError(() => tree.set("/a", str("b")), "TREE_CLOSED");
      await expectTreeError(() => tree.list("/"), "TREE_CLOSED");
      await expectTreeError(() => tree.append("/q/", str("b")), "TREE_CLOSED");
    });
  });
}
