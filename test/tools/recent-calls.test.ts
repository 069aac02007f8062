/**
 * The index of each tool's recent calls (tools/records/recent-calls.ts) that a tool's page shows: read from
 * the records at first use, followed live after, newest first, bounded per tool.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createRecentCalls, type RecentCalls } from "../../tools/records/recent-calls.js";
import { json } from "../../tree/index.js";
import { useHarness } from "./helpers.js";

describe("recent calls of a tool", () => {
  const h = useHarness();
  let index: RecentCalls | undefined;
  afterEach(() => index?.close());
  const call = (name: string, args: unknown, vid: string) => h.runtime.call(name, args, { vid });

  it("finds a tool's calls across runs, newest first, with their outcome, from the records made before and after it started", async () => {
    await h.tree.set("/notes/a", json("hello") as never);
    expect((await call("tree.get", { key: "/notes/a" }, "r1")).kind).toBe("ok");
    expect((await call("tree.get", {}, "r2")).kind).toBe("arg");
    expect((await call("tree.list", { key: "/notes/" }, "r2")).kind).toBe("ok");
    index = createRecentCalls({ tree: h.tree });
    const first = await index.of("tree.get");
    expect(first.complete).toBe(true);
    expect(first.calls.map((c) => [c.key, c.kind, c.state])).toEqual([
      ["/byteseek/tool/r2/0", "arg", "done"],
      ["/byteseek/tool/r1/0", "ok", "done"],
    ]);
    expect(first.calls[0]).toMatchObject({ vid: "r2", n: 0, isError: true });
    expect(first.calls[0]?.text).toMatch(/key/);
    // a call recorded after the index was built is in the next answer
    expect((await call("tree.get", { key: "/notes/none" }, "r3")).kind).toBeDefined();
    const next = await index.of("tree.get");
    expect(next.calls.map((c) => c.key)).toEqual([
      "/byteseek/tool/r3/0",
      "/byteseek/tool/r2/0",
      "/byteseek/tool/r1/0",
    ]);
    expect((await index.of("tree.list")).calls.map((c) => c.key)).toEqual(["/byteseek/tool/r2/1"]);
    expect((await index.of("no.such")).calls).toEqual([]);
    // a run's records removed: its calls leave the index
    await h.tree.deltree("/byteseek/tool/r2/", { force: true });
    expect((await index.of("tree.get")).calls.map((c) => c.vid)).toEqual(["r3", "r1"]);
    expect((await index.of("tree.list")).calls).toEqual([]);
  });

  it("keeps the newest calls of each tool only, and says when its first read stopped short", async () => {
    for (let i = 0; i < 5; i++) await call("tree.get", {}, "many");
    index = createRecentCalls({ tree: h.tree, perTool: 3, maxScan: 4 });
    const capped = await index.of("tree.get");
    expect(capped.complete).toBe(false);
    expect(capped.calls.map((c) => c.n)).toEqual([3, 2, 1]);
    await call("tree.get", {}, "many");
    expect((await index.of("tree.get", 2)).calls.map((c) => c.n)).toEqual([5, 3]);
  });
});
