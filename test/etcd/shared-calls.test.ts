/** Two byteseek processes' runtimes on one etcd: one commit per call, counters exact, records dense. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTools } from "../../tools/catalogue/seed.js";
import type { ToolUsage } from "../../tools/records/usage.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { silent, tempDir, testBuiltins } from "../tools/helpers.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

let etcd: EtcdCluster;
const trees: Tree[] = [];
const runtimes: Runtime[] = [];
const dirs: Array<{ remove(): Promise<unknown> }> = [];

beforeAll(async () => {
  etcd = await startEtcd();
  const builtins = testBuiltins();
  for (let i = 0; i < 2; i++) {
    const tree = await createEtcdTree({ endpoints: etcd.endpoints, prefix: "calls/" });
    trees.push(tree);
    const ws = await tempDir("byteseek-etcd-calls-ws-");
    dirs.push(ws);
    runtimes.push(createRuntime({ tree, builtins, logger: silent, workspace: ws.path }));
  }
  await seedTools({ tree: trees[0]!, builtins });
}, 60_000);

afterAll(async () => {
  for (const r of runtimes) await r.close();
  for (const t of trees) await t.close();
  for (const d of dirs) await d.remove();
  await etcd?.remove();
});

describe("tool calls from two processes on one etcd", () => {
  it("commit twice per call that runs: its intent, then its result with the counters", async () => {
    const [a] = trees;
    await runtimes[0]!.call("test.noop", {}, { vid: "one" });
    const before = await a!.syncRevision!();
    await runtimes[0]!.call("test.noop", {}, { vid: "one" });
    expect(await a!.syncRevision!()).toBe(before + 2);
  });

  it("keep the run's counters exact and its record numbers dense", async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_v, i) =>
        runtimes[i % 2]!.call("test.echo", { text: `#${i}` }, { vid: "shared" }),
      ),
    );
    const numbers = results.map((r) => Number(r.record?.split("/").at(-1))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 40 }, (_v, i) => i));
    const node = await trees[1]!.get("/byteseek/usage/shared", { consistency: "linearizable" });
    const u = (node?.kind === "json" ? node.value.value : {}) as unknown as ToolUsage;
    expect(u.calls).toBe(40);
    expect(u.tools["test.echo"]).toMatchObject({ calls: 40, kinds: { ok: 40 } });
  });
});
