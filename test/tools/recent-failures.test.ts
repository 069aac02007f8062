import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runsOverview } from "../../agent/runs-overview.js";
import { createRecentCalls } from "../../tools/records/recent-calls.js";
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
    // the records in the window, the running call's included; the old run's is not counted
    expect(got.scanned).toBe(5);
  });

  it("stops at its bound and says so", async () => {
    const got = await recentFailures(tree, { since: 0, maxRecords: 2 });
    expect(got.truncated).toBe(true);
    expect(got.scanned).toBe(2);
  });
});

describe("the failing tools from the records index (followed from the watch)", () => {
  const MIN = 60_000;
  /** A record written `ago` ms before `now`, as the runtime stores it (its time: ts + ms). */
  const at = (
    now: number,
    name: string,
    isError: boolean,
    ago: number,
    extra: Record<string, unknown> = {},
  ) => record(name, isError, { ts: now - ago - 1, ms: 1, ...extra });

  it("answers what the scan answers, for every window, as records are added, updated, deleted and left behind by the window", async () => {
    const t = await openTree({ backend: "memory" });
    // the index's tree counts the reads it is asked for
    let reads = 0;
    const counted = new Proxy(t, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== "function") return v;
        if (prop === "get" || prop === "list")
          return (...args: unknown[]) => {
            reads++;
            return v.apply(target, args);
          };
        return v.bind(target);
      },
    });
    const index = createRecentCalls({ tree: counted });
    try {
      const now = Date.now();
      const windows = [0, 3 * MIN, 12 * MIN, 35 * MIN, 60 * MIN, 3 * 60 * MIN, 9 * 24 * 60 * MIN].map(
        (w) => now - w,
      );
      const same = async (stage: string) => {
        for (const since of windows)
          expect(await index.failures({ since }), `${stage}, since ${now - since} ms`).toEqual(
            await recentFailures(t, { since }),
          );
      };
      // before the index is made: what its first read finds
      await t.append("/byteseek/tool/rold/", at(now, "shell.run", true, 120 * MIN));
      await t.append("/byteseek/tool/rold/", at(now, "shell.run", false, 90 * MIN));
      // older than the week the index keeps: only a window reaching that far (the scan) counts it
      await t.append("/byteseek/tool/ancient/", at(now, "shell.run", true, 8 * 24 * 60 * MIN));
      await t.append("/byteseek/tool/ra/", at(now, "shell.run", true, 50 * MIN));
      await t.append("/byteseek/tool/ra/", at(now, "shell.run", false, 40 * MIN));
      await t.append("/byteseek/tool/ra/", at(now, "edit.read", true, 30 * MIN, { kind: "arg" }));
      await same("loaded");
      expect(
        (await index.failures({ since: now - 60 * MIN })).tools.map((x) => [x.name, x.failures, x.calls]),
      ).toEqual([
        ["edit.read", 1, 1],
        ["shell.run", 1, 2],
      ]);

      // after: what the watch brings — a call started, then its result; a value that is no record
      await t.append("/byteseek/tool/ra/", at(now, "edit.write", true, 10 * MIN, { state: "started" }));
      await t.append("/byteseek/tool/rb/", at(now, "shell.run", true, 20 * MIN));
      await t.append("/byteseek/tool/rb/", json({ note: "not a call record" }));
      await t.append("/byteseek/tool/rb/", at(now, "tree.get", true, 5 * MIN, { kind: "arg" }));
      await t.append("/byteseek/tool/rone/", at(now, "shell.run", true, 25 * MIN));
      await t.append("/byteseek/tool/rone/", at(now, "shell.run", true, 24 * MIN));
      await t.append("/byteseek/tool/rdel/", at(now, "edit.write", true, 15 * MIN));
      await same("followed");
      await t.set("/byteseek/tool/ra/3", at(now, "edit.write", false, 2 * MIN));
      await same("a started call's result");

      // a record deleted, and a run's records deleted
      await t.del("/byteseek/tool/rone/1");
      await t.deltree("/byteseek/tool/rdel/", { force: true });
      await same("deleted");
      const hour = await index.failures({ since: now - 60 * MIN });
      expect(hour.tools.map((x) => [x.name, x.failures, x.calls])).toEqual([
        ["shell.run", 3, 4],
        // as many failures: the latest first
        ["tree.get", 1, 1],
        ["edit.read", 1, 1],
      ]);
      expect(hour.tools[0]?.last.key).toBe("/byteseek/tool/rb/0");
      // a question reads no record: the index answers from what the watch brought
      reads = 0;
      expect(await index.failures({ since: now - 60 * MIN })).toEqual(hour);
      expect(reads).toBe(0);
    } finally {
      index.close();
      await t.close();
    }
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
