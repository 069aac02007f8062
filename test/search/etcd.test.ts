import { describe, expect, it } from "vitest";
import { createLiveToolIndex } from "../../tools/search/live.js";
import type { Tree } from "../../tree/types.js";
import { useTwoTrees } from "../etcd/fixtures.js";

let a: Tree;
let b: Tree;
useTwoTrees("search-live/", (_etcd, x, y) => {
  [a, b] = [x, y];
});

const decl = (name: string, description: string) => ({
  kind: "json" as const,
  value: { name, description, params: { type: "object" }, impl: { kind: "builtin", ref: "edit.read" } },
});

describe("live tool index on etcd", () => {
  it("finds a declaration another server wrote, and forgets one it removed", async () => {
    await a.set("/byteseek/tools/first.tool", decl("first.tool", "an okapi grazes"));
    const live = createLiveToolIndex({ tree: b });
    try {
      await live.ready;
      expect(live.index.search("okapi").map((h) => h.name)).toEqual(["first.tool"]);
      const added = await a.set("/byteseek/tools/second.tool", decl("second.tool", "a narwhal dives"));
      await live.caughtUp(added.rev);
      expect(live.index.search("narwhal").map((h) => h.name)).toEqual(["second.tool"]);
      const gone = await a.del("/byteseek/tools/first.tool");
      await live.caughtUp(gone.rev);
      expect(live.index.search("okapi")).toEqual([]);
    } finally {
      live.close();
    }
  });
});
