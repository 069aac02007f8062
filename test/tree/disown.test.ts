import { describe, expect, it } from "vitest";
import { openTree } from "../../tree/index.js";
import { str } from "../../tree/value.js";
import { tempDir } from "./temp-dir.js";

/** The embedded engines (etcd's writes are planned by the same tree/plan.ts). */
const engines = [
  ["memory", () => openTree({ backend: "memory" })],
  [
    "classic-level",
    async () => {
      const dir = await tempDir();
      const tree = await openTree({ backend: "classic", location: dir.path });
      cleanups.push(dir.remove);
      return tree;
    },
  ],
] as const;
const cleanups: Array<() => Promise<void>> = [];

describe.each(engines)("the owner run of a key on %s", (_name, open) => {
  it("is kept by a write without vid, and cleared by one that says disown (set and txn)", async () => {
    const tree = await open();
    try {
      await tree.set("/o/a", str("1"), { vid: "run-1" });
      await tree.set("/o/a", str("2"));
      expect((await tree.get("/o/a"))?.vid).toBe("run-1");
      await tree.set("/o/a", str("3"), { disown: true });
      expect((await tree.get("/o/a"))?.vid).toBeUndefined();
      await tree.set("/o/b", str("1"), { vid: "run-2" });
      await tree.txn({ success: [{ op: "set", key: "/o/b", value: str("2"), disown: true }] });
      expect((await tree.get("/o/b"))?.vid).toBeUndefined();
      // a vid given wins over disown: the write is that run's
      await tree.set("/o/b", str("3"), { vid: "run-3", disown: true });
      expect((await tree.get("/o/b"))?.vid).toBe("run-3");
      // an import line likewise (the checked tree marks a person's lines so)
      await tree.import([{ key: "/o/b", kind: "char/utf8", value: "4", disown: true }]);
      expect((await tree.get("/o/b"))?.vid).toBeUndefined();
      await tree.import([{ key: "/o/b", kind: "char/utf8", value: "5", vid: "run-4", disown: true }]);
      expect((await tree.get("/o/b"))?.vid).toBe("run-4");
    } finally {
      await tree.close();
      await Promise.all(cleanups.splice(0).map((c) => c()));
    }
  });
});
