import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runsOverview } from "../../agent/runs-overview.js";
import { recentFailures } from "../../tools/records/recent-failures.js";
import { json, openTree, str, type Tree } from "../../tree/index.js";

let tree: Tree;

/** A call record as the runtime stores it, with the fields the scan reads. */
function record(name: string, isError: boolean, extra: Record<string, unknown> = {}) {
  return json({
    name,
    args: {},
    kind: isError ? "runtime" : "ok",
    isError,
    text: isError ? `${name} failed\nsecond line` : "ok",
    details: {},
    ts: Date.now(),
    ms: 1,
    state: "done",
    ...extra,
  });
}

beforeAll(async () => {
  tree = await openTree({ backend: "memory" });
});
afterAll(async () => {
  await tree.close();
});

describe("recentFailures", () => {
  it("answers no tools on a store with no records at all", async () => {
    expect(await recentFailures(tree, { since: 0 })).toEqual({ since: 0, tools: [], scanned: 0 });
  });

  it("counts failures by tool within the window only, most first, ignoring calls still running", async () => {
    await tree.append("/byteseek/tool/rold/", record("shell.run", true));
    await new Promise((r) => setTimeout(r, 5));
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await tree.append("/byteseek/tool/ra/", record("shell.run", true));
    await tree.append("/byteseek/tool/ra/", record("shell.run", false));
    await tree.append("/byteseek/tool/ra/", record("edit.read", true));
    await tree.append("/byteseek/tool/rb/", record("shell.run", true));
    await tree.append("/byteseek/tool/rb/", record("edit.write", true, { state: "started" }));

    const got = await recentFailures(tree, { since });
    expect(got.tools.map((t) => [t.name, t.failures, t.calls])).toEqual([
      ["shell.run", 2, 3],
      ["edit.read", 1, 1],
    ]);
    // the newest failure, its first line only
    expect(got.tools[0]?.last).toMatchObject({
      key: "/byteseek/tool/rb/0",
      kind: "runtime",
      text: "shell.run failed",
    });
    expect(got.truncated).toBeUndefined();
    // the old run's record was read (to find the window's edge) and not counted
    expect(got.scanned).toBe(6);
  });

  it("stops at its bound and says so", async () => {
    const got = await recentFailures(tree, { since: 0, maxRecords: 2 });
    expect(got.truncated).toBe(true);
    expect(got.scanned).toBe(2);
  });
});

describe("runsOverview", () => {
  it("counts runs by status and shows running ones before the latest failed and done", async () => {
    const empty = await runsOverview(await openTree({ backend: "memory" }));
    expect(empty).toEqual({ counts: { running: 0, interrupted: 0, done: 0, failed: 0 }, shown: [] });
    for (const [vid, status] of [
      ["r1", "done"],
      ["r2", "failed"],
      ["r3", "running"],
      ["r4", "done"],
    ] as const)
      await tree.set(`/vthread/${vid}/status`, str(status));
    const got = await runsOverview(tree);
    // no live process holds r3's lease: it is interrupted
    expect(got.counts).toEqual({ running: 0, interrupted: 1, done: 2, failed: 1 });
    expect(got.shown.map((r) => `${r.vid}:${r.status}`)).toEqual([
      "r3:interrupted",
      "r2:failed",
      "r4:done",
      "r1:done",
    ]);
  });
});
