/** A call's record and its run's usage counters are one tree write, exact under concurrent callers. */
import { afterEach, describe, expect, it } from "vitest";
import { seedTools } from "../../tools/catalogue/seed.js";
import type { ToolUsage } from "../../tools/records/usage.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { BACKENDS, recordAt, silent, tempDir, testBuiltins, useHarness } from "./helpers.js";

async function usageOf(tree: Tree, vid: string): Promise<ToolUsage> {
  const node = await tree.get(`/byteseek/usage/${vid}`);
  if (node?.kind !== "json") throw new Error(`no usage node for ${vid}`);
  return node.value.value as unknown as ToolUsage;
}

describe.each(BACKENDS)("a call's write on %s", (backend) => {
  const h = useHarness(backend);

  it("stores the started record before the call runs, then its result and the counters in one commit", async () => {
    for (let i = 0; i < 3; i++) {
      const before = h.tree.revision();
      const r = await h.runtime.call("test.echo", { text: `#${i}` }, { vid: "once" });
      expect(h.tree.revision()).toBe(before + 2);
      expect(r.record).toBe(`/byteseek/tool/once/${i}`);
      const record = await h.tree.get(r.record!);
      const usage = await h.tree.get("/byteseek/usage/once");
      expect(usage?.modRev).toBe(before + 2);
      expect(record?.modRev).toBe(before + 2);
      expect(record?.createRev).toBe(before + 1);
      expect(await recordAt(h.tree, r.record!)).toMatchObject({ state: "done", idempotencyKey: `once/${i}` });
      expect((await usageOf(h.tree, "once")).calls).toBe(i + 1);
    }
    await h.runtime.flush();
    expect(h.tree.revision()).toBe((await h.tree.get("/byteseek/usage/once"))?.modRev);
  });

  it("records a failed call and counts it in the same write", async () => {
    const before = h.tree.revision();
    const r = await h.runtime.call("test.echo", { text: 1 }, { vid: "bad" });
    expect(r.kind).toBe("arg");
    expect(h.tree.revision()).toBe(before + 1);
    expect(await recordAt(h.tree, r.record!)).toMatchObject({
      name: "test.echo",
      kind: "arg",
      isError: true,
    });
    expect((await usageOf(h.tree, "bad")).kinds).toEqual({ arg: 1 });
    await h.runtime.flush();
    expect(h.tree.revision()).toBe(before + 1);
  });
});

describe("concurrent callers of one run", () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it("keep the counters exact and the record numbers dense across two runtimes on one store", async () => {
    const store = await tempDir("byteseek-call-write-db-");
    cleanup.push(() => store.remove());
    const tree = await openTree({ backend: "classic", location: store.path });
    cleanup.push(() => tree.close());
    const builtins = testBuiltins();
    await seedTools({ tree, builtins });
    const runtimes: Runtime[] = [];
    for (let i = 0; i < 2; i++) {
      const ws = await tempDir("byteseek-call-write-ws-");
      cleanup.push(() => ws.remove());
      const rt = createRuntime({ tree, builtins, logger: silent, workspace: ws.path });
      cleanup.push(() => rt.close());
      runtimes.push(rt);
    }
    // Each runtime groups its own calls; the two race on the usage node's compare.
    const calls = Array.from({ length: 60 }, (_v, i) =>
      runtimes[i % 2]!.call(i % 3 === 0 ? "test.noop" : "test.echo", { text: `#${i}` }, { vid: "race" }),
    );
    const results = await Promise.all(calls);
    const numbers = results.map((r) => Number(r.record?.split("/").at(-1))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 60 }, (_v, i) => i));
    const u = await usageOf(tree, "race");
    expect(u.calls).toBe(60);
    expect(u.tools["test.noop"]?.calls).toBe(20);
    expect(u.tools["test.noop"]?.kinds).toEqual({ arg: 20 });
    expect(u.tools["test.echo"]?.calls).toBe(40);
    expect(u.kinds).toEqual({ ok: 40, arg: 20 });
  });

  it("still records and counts a call whose record is too large for one write with the counters", async () => {
    const tree = await openTree({ backend: "memory", maxValueBytes: 30_000 });
    cleanup.push(() => tree.close());
    const builtins = testBuiltins();
    await seedTools({ tree, builtins });
    const ws = await tempDir("byteseek-call-write-ws-");
    cleanup.push(() => ws.remove());
    const rt = createRuntime({ tree, builtins, logger: silent, workspace: ws.path });
    cleanup.push(() => rt.close());
    const r = await rt.call("test.echo", { text: "x".repeat(12_000), times: 2 }, { vid: "big" });
    expect(r.kind).toBe("ok");
    expect(r.record).toBe("/byteseek/tool/big/0");
    expect(await recordAt(tree, r.record!)).toMatchObject({
      name: "test.echo",
      args: { "‥omitted": "too large to record" },
    });
    expect((await usageOf(tree, "big")).calls).toBe(1);
  });
});
