import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TreeError } from "../../tree/errors.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree, WatchBatch } from "../../tree/types.js";
import { int64, str } from "../../tree/value.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

let etcd: EtcdCluster;
let tree: Tree;

beforeAll(async () => {
  etcd = await startEtcd();
  tree = await createEtcdTree({
    endpoints: etcd.endpoints,
    prefix: "outage/",
    unavailableAfterMs: 500,
    callTimeoutMs: 2000,
  });
}, 60_000);

afterAll(async () => {
  await tree?.close();
  await etcd?.remove();
});

/** Runs `op` until it succeeds, at most `tries` times, answering the errors seen before. */
async function untilItWorks<T>(op: () => Promise<T>, tries = 200): Promise<{ value: T; errors: string[] }> {
  const errors: string[] = [];
  for (let i = 0; i < tries; i++) {
    try {
      return { value: await op(), errors };
    } catch (err) {
      errors.push(err instanceof TreeError ? err.code : String(err));
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`never recovered: ${errors.slice(-3).join(", ")}`);
}

describe("etcd going away", () => {
  it("fails operations with TREE_UNAVAILABLE while etcd is down, and recovers by itself when it is back", async () => {
    await tree.set("/before", str("written before the outage"));
    const from = tree.revision() + 1;
    const seen: WatchBatch[] = [];
    const controller = new AbortController();
    const watching = (async () => {
      for await (const batch of tree.watch("/", { fromRev: from, signal: controller.signal })) {
        seen.push(batch);
        if (seen.length === 2) return;
      }
    })();
    await tree.set("/during/0", int64(0n));

    const member = etcd.members[0]!;
    await member.stop("SIGKILL");
    const failures = [
      () => tree.get("/before"),
      () => tree.set("/during/1", int64(1n)),
      () => tree.list("/"),
      () => tree.append("/q/", str("x")),
      () => tree.history("/before"),
    ];
    for (const op of failures) {
      const err = await op().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, "an operation succeeded while etcd was down").toBeInstanceOf(TreeError);
      expect((err as TreeError).code).toBe("TREE_UNAVAILABLE");
      expect((err as TreeError).message).toMatch(/etcd/);
    }

    await member.start();
    const { value: node } = await untilItWorks(() => tree.get("/before"));
    expect(node).toMatchObject({ value: str("written before the outage") });
    const written = await untilItWorks(() => tree.set("/during/1", int64(1n)));
    expect(written.value.version).toBe(1);
    // The watch made before the outage goes on where it was, without a gap or a repeat.
    await watching;
    expect(
      seen.map((b) => b.events.map((e) => e.key).filter((k) => k.startsWith("/during/") && !k.endsWith("/"))),
    ).toEqual([["/during/0"], ["/during/1"]]);
    controller.abort();
  });
});
