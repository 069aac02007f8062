import { describe, expect, it } from "vitest";
import { markInterrupted } from "../../agent/runs.js";
import { openTree } from "../../tree/index.js";

describe("markInterrupted", () => {
  it("finds nothing to mark, and fails nothing, on a store where no run ever started (no /vthread/ yet: a server's first start)", async () => {
    const tree = await openTree({ backend: "memory" });
    try {
      expect(await markInterrupted(tree)).toEqual([]);
    } finally {
      await tree.close();
    }
  });
});
