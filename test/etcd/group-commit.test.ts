import type { Etcd3 } from "etcd3";
import { describe, expect, it } from "vitest";
import type { BuiltTxn } from "../../tree/etcd/attempt.js";
import { createGroupCommit } from "../../tree/etcd/group-commit.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import { EtcdRpc } from "../../tree/etcd/rpc.js";
import type { RequestOp, TxnRequest, TxnResponse } from "../../tree/etcd/wire.js";
import type { Tree, WatchBatch } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import type { EtcdCluster } from "./etcd-process.js";
import { useEtcdClient } from "./fixtures.js";

let etcd: EtcdCluster;
let client: Etcd3;
let n = 0;

useEtcdClient((e, c) => ([etcd, client] = [e, c]));

const buf = (s: string) => Buffer.from(s, "utf8");

/** A transaction putting `keys` (under a test prefix), guarded by `version == 0` on `guard` if given. */
function putTxn(keys: string[], guard?: { key: string; version: number }): BuiltTxn {
  return {
    compare: guard
      ? [{ key: buf(guard.key), target: "Version", result: "Equal", version: guard.version }]
      : [],
    success: keys.map((k) => ({ request_put: { key: buf(k), value: buf("x") } })),
    marker: keys[0] ?? "",
    touched: { reads: guard ? [guard.key] : [], writes: keys },
  };
}

/**
 * The real rpc, holding each transaction back until the test lets it go, so a test sees which
 * batches group commit sends while another is on its way.
 */
class HeldRpc extends EtcdRpc {
  readonly sent: Array<{ keys: string[]; go: () => void; done: Promise<TxnResponse> }> = [];

  override txn(req: TxnRequest): Promise<TxnResponse> {
    const ops: RequestOp[] =
      req.success?.flatMap((op) => ("request_txn" in op ? (op.request_txn.success ?? []) : [op])) ?? [];
    const keys = ops.map((op) => ("request_put" in op ? String(op.request_put.key) : "?"));
    let go!: () => void;
    const held = new Promise<void>((r) => {
      go = r;
    });
    const done = held.then(() => super.txn(req));
    this.sent.push({ keys, go, done });
    return done;
  }

  /** Resolves once `count` transactions have been sent. */
  async untilSent(count: number): Promise<void> {
    for (let i = 0; i < 500 && this.sent.length < count; i++) await new Promise((r) => setTimeout(r, 2));
    expect(this.sent.length).toBe(count);
  }
}

/** The real rpc, noting the shape of each transaction: `flat <ops>` or `nested <writes>`. */
class ShapeRpc extends EtcdRpc {
  readonly shapes: string[] = [];

  override txn(req: TxnRequest): Promise<TxnResponse> {
    const ops = req.success ?? [];
    const nested = ops.some((op) => "request_txn" in op);
    this.shapes.push(`${nested ? "nested" : "flat"} ${ops.length}`);
    return super.txn(req);
  }
}

/** Group commit on a HeldRpc, with a fresh key prefix. */
function heldGroup() {
  const rpc = new HeldRpc({ endpoints: etcd.endpoints });
  return { p: `gc${++n}/`, rpc, group: createGroupCommit({ rpc, maxTxnOps: 128 }) };
}

/** A few turns of the event loop: what group commit would send by now, it has. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

async function take(tree: Tree, fromRev: number, events: number): Promise<WatchBatch[]> {
  const out: WatchBatch[] = [];
  let seen = 0;
  for await (const batch of tree.watch("/", { fromRev })) {
    out.push(batch);
    seen += batch.events.length;
    if (seen >= events) break;
  }
  return out;
}

describe("group commit on etcd", () => {
  it("commits concurrent overwrites of different keys together, each with its own version and watch event", async () => {
    const tree = await createEtcdTree({ endpoints: etcd.endpoints, client, prefix: `gc${++n}/` });
    try {
      const keys = Array.from({ length: 32 }, (_v, i) => `/g/k${i}`);
      for (const k of keys) await tree.set(k, str("first"));
      const from = tree.revision() + 1;
      const watched = take(tree, from, 32);
      const results = await Promise.all(keys.map((k, i) => tree.set(k, str(`second ${i}`))));
      // One round trip carried several writes: they share its revision.
      expect(new Set(results.map((r) => r.rev)).size).toBeLessThan(32);
      const events = (await watched).flatMap((b) => b.events.map((e) => ({ ...e, batchRev: b.rev })));
      expect(events).toHaveLength(32);
      for (const [i, res] of results.entries()) {
        expect(res.version).toBe(2);
        expect(events.filter((e) => e.key === keys[i])).toEqual([
          expect.objectContaining({
            type: "put",
            rev: res.rev,
            batchRev: res.rev,
            version: 2,
            value: str(`second ${i}`),
          }),
        ]);
        expect(await tree.get(keys[i]!, { consistency: "linearizable" })).toMatchObject({
          version: 2,
          modRev: res.rev,
          value: str(`second ${i}`),
        });
      }
    } finally {
      await tree.close();
    }
  });

  it("delivers every write's events when deletes and sets commit in one revision", async () => {
    const tree = await createEtcdTree({ endpoints: etcd.endpoints, client, prefix: `gc${++n}/` });
    try {
      const dirs = Array.from({ length: 16 }, (_v, i) => `/d${i}/`);
      for (const d of dirs) await tree.set(`${d}v`, str("v1"));
      const from = tree.revision() + 1;
      const watched = take(tree, from, 16);
      // Each write in its own directory, so none of them shares a key with another.
      const results = await Promise.all(
        dirs.map((d, i) => (i % 2 === 0 ? tree.del(`${d}v`) : tree.set(`${d}v`, str("v2")))),
      );
      expect(new Set(results.map((r) => r.rev)).size).toBeLessThan(16);
      const events = (await watched).flatMap((b) => b.events);
      expect(events.map((e) => `${e.type} ${e.key}`).sort()).toEqual(
        dirs.map((d, i) => `${i % 2 === 0 ? "delete" : "put"} ${d}v`).sort(),
      );
      for (const [i, d] of dirs.entries()) {
        const node = await tree.get(`${d}v`, { consistency: "linearizable" });
        if (i % 2 === 0) expect(node).toBeUndefined();
        else expect(node).toMatchObject({ version: 2, value: str("v2") });
        expect(await tree.get(d, { consistency: "linearizable" })).toMatchObject({
          count: i % 2 === 0 ? 0 : 1,
        });
      }
    } finally {
      await tree.close();
    }
  });

  it("fails only the write whose compare does not hold; the others in its batch commit", async () => {
    const p = `gc${++n}/`;
    const group = createGroupCommit({ rpc: new EtcdRpc({ endpoints: etcd.endpoints }), maxTxnOps: 128 });
    await client.kv.put({ key: buf(`${p}taken`), value: buf("already") });
    const outcomes = await Promise.all([
      group.commit(putTxn([`${p}a0`])),
      ...Array.from({ length: 8 }, (_v, i) =>
        group.commit(putTxn([`${p}b${i}`], i === 3 ? { key: `${p}taken`, version: 0 } : undefined)),
      ),
    ]);
    expect(outcomes.map((o) => o.succeeded)).toEqual([true, true, true, true, false, true, true, true, true]);
    // The eight after the first went together.
    expect(new Set(outcomes.slice(1).map((o) => o.rev)).size).toBe(1);
    const got = await client.kv.range({ key: buf(`${p}b`), range_end: buf(`${p}c`) });
    expect(got.kvs.map((kv) => kv.key.toString())).toEqual([0, 1, 2, 4, 5, 6, 7].map((i) => `${p}b${i}`));
  });

  it("sends a batch flat while its compares hold, nested for a while after one fails, then flat again", async () => {
    const p = `gc${++n}/`;
    const rpc = new ShapeRpc({ endpoints: etcd.endpoints });
    const group = createGroupCommit({ rpc, maxTxnOps: 128, nestedAfterConflict: 1 });
    await client.kv.put({ key: buf(`${p}taken`), value: buf("already") });
    /** Eight writes at once, each guarded by `version == 0` on a key of its own; `taken` for the one at `conflict`. */
    const eight = (round: string, conflict?: number) =>
      Promise.all(
        Array.from({ length: 8 }, (_v, i) =>
          group.commit(
            putTxn([`${p}${round}/${i}`], {
              key: i === conflict ? `${p}taken` : `${p}free/${round}`,
              version: 0,
            }),
          ),
        ),
      );
    const holding = await eight("r1");
    expect(holding.every((o) => o.succeeded)).toBe(true);
    expect(new Set(holding.map((o) => o.rev)).size).toBe(1);
    expect(rpc.shapes).toEqual(["flat 8"]);
    // One compare fails: nothing of the flat batch was applied; nested, only that write fails.
    const conflicting = await eight("r2", 5);
    expect(conflicting.map((o) => o.succeeded)).toEqual([true, true, true, true, true, false, true, true]);
    expect(rpc.shapes.slice(1)).toEqual(["flat 8", "nested 8"]);
    // The next batch goes nested straight away (nestedAfterConflict: 1), the one after flat again.
    expect((await eight("r3")).every((o) => o.succeeded)).toBe(true);
    expect((await eight("r4")).every((o) => o.succeeded)).toBe(true);
    expect(rpc.shapes.slice(3)).toEqual(["nested 8", "flat 8"]);
    const got = await client.kv.range({ key: buf(`${p}r`), range_end: buf(`${p}s`), keys_only: true });
    expect(got.kvs.map((kv) => kv.key.toString()).sort()).toEqual(
      ["r1", "r2", "r3", "r4"]
        .flatMap((r) => Array.from({ length: 8 }, (_v, i) => `${p}${r}/${i}`))
        .filter((k) => k !== `${p}r2/5`)
        .sort(),
    );
  });

  it("sends a batch nested when, flat, it would go over etcd's operation limit", async () => {
    const p = `gc${++n}/`;
    const rpc = new ShapeRpc({ endpoints: etcd.endpoints });
    // Two puts a write: five writes fit nested (5 + 1 + 2 <= 8), not flat (10 puts > 8).
    const group = createGroupCommit({ rpc, maxTxnOps: 8 });
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, (_v, i) => group.commit(putTxn([`${p}${i}/a`, `${p}${i}/b`]))),
    );
    expect(outcomes.every((o) => o.succeeded)).toBe(true);
    expect(rpc.shapes).toEqual(["nested 5"]);
  });

  it("sends a batch etcd refuses again write by write, so each write gets its own outcome", async () => {
    const p = `gc${++n}/`;
    // The tree's limit says more than this etcd accepts (1024 operations): a batch of one big write
    // and 30 small ones goes over what etcd leaves a nested transaction.
    const group = createGroupCommit({
      rpc: new EtcdRpc({ endpoints: etcd.endpoints }),
      maxTxnOps: 4096,
      maxBatchBytes: 64 * 1024 * 1024,
    });
    const big = Array.from({ length: 1000 }, (_v, i) => `${p}big/${i}`);
    const outcomes = await Promise.all([
      group.commit(putTxn([`${p}first`])),
      group.commit(putTxn(big)),
      ...Array.from({ length: 30 }, (_v, i) => group.commit(putTxn([`${p}small/${i}`]))),
    ]);
    expect(outcomes.every((o) => o.succeeded)).toBe(true);
    const count = async (from: string, to: string) =>
      Number((await client.kv.range({ key: buf(from), range_end: buf(to), count_only: true })).count);
    expect(await count(`${p}big/`, `${p}big0`)).toBe(1000);
    expect(await count(`${p}small/`, `${p}small0`)).toBe(30);
  });

  it("sends a batch beside the one on its way, but holds back a write to a key that one writes", async () => {
    const { p, rpc, group } = heldGroup();
    const first = group.commit(putTxn([`${p}a`]));
    await rpc.untilSent(1);
    // While the first is on its way: two writes of other keys, and a second write of its key.
    const others = [group.commit(putTxn([`${p}b`])), group.commit(putTxn([`${p}c`]))];
    const again = group.commit(putTxn([`${p}a`]));
    await rpc.untilSent(2);
    expect(rpc.sent[1]!.keys.sort()).toEqual([`${p}b`, `${p}c`]);
    rpc.sent[1]!.go();
    const [b, c] = await Promise.all(others);
    expect(b!.succeeded && c!.succeeded).toBe(true);
    await settle();
    // The write of `a` waits for the batch that writes `a`, even with room beside it.
    expect(rpc.sent).toHaveLength(2);
    rpc.sent[0]!.go();
    const a1 = await first;
    await rpc.untilSent(3);
    expect(rpc.sent[2]!.keys).toEqual([`${p}a`]);
    rpc.sent[2]!.go();
    const a2 = await again;
    expect(a1.succeeded && a2.succeeded).toBe(true);
    expect(a2.rev).toBeGreaterThan(a1.rev);
  });

  it("sends a batch beside the one on its way only once it is as large, and at most two at once", async () => {
    const { p, rpc, group } = heldGroup();
    const commit = (name: string) => group.commit(putTxn([`${p}${name}`]));
    const first = ["a", "b", "c"].map(commit);
    await rpc.untilSent(1);
    expect(rpc.sent[0]!.keys).toHaveLength(3);
    const second = ["d", "e"].map(commit);
    await settle();
    expect(rpc.sent).toHaveLength(1);
    second.push(commit("f"));
    await rpc.untilSent(2);
    expect(rpc.sent[1]!.keys).toHaveLength(3);
    // Two on their way: the next waits for one of them, whatever its size.
    const third = ["g", "h", "i", "j"].map(commit);
    await settle();
    expect(rpc.sent).toHaveLength(2);
    rpc.sent[0]!.go();
    await Promise.all(first);
    await rpc.untilSent(3);
    expect(rpc.sent[2]!.keys).toHaveLength(4);
    for (const s of rpc.sent.slice(1)) s.go();
    const all = await Promise.all([...first, ...second, ...third]);
    expect(all.every((o) => o.succeeded)).toBe(true);
  });

  it("lets no batch overtake the first waiting write while it cannot go", async () => {
    const { p, rpc, group } = heldGroup();
    // A write that names no keys (a range delete, say) must go alone, after the batch on its way.
    const first = group.commit(putTxn([`${p}a`]));
    await rpc.untilSent(1);
    const { touched: _keys, ...alone } = putTxn([`${p}alone`]);
    const lone = group.commit(alone);
    const after = ["b", "c"].map((k) => group.commit(putTxn([`${p}${k}`])));
    await settle();
    expect(rpc.sent).toHaveLength(1);
    rpc.sent[0]!.go();
    await first;
    await rpc.untilSent(2);
    expect(rpc.sent[1]!.keys).toEqual([`${p}alone`]);
    await settle();
    expect(rpc.sent).toHaveLength(2);
    rpc.sent[1]!.go();
    const l = await lone;
    await rpc.untilSent(3);
    expect(rpc.sent[2]!.keys.sort()).toEqual([`${p}b`, `${p}c`]);
    // A write of a key the batch on its way writes waits for it, and the writes after it with it.
    const again = group.commit(putTxn([`${p}b`]));
    const later = group.commit(putTxn([`${p}d`]));
    await settle();
    expect(rpc.sent).toHaveLength(3);
    rpc.sent[2]!.go();
    const rest = await Promise.all(after);
    expect(rest.every((o) => o.succeeded && o.rev > l.rev)).toBe(true);
    await rpc.untilSent(4);
    expect(rpc.sent[3]!.keys).toEqual([`${p}b`, `${p}d`]);
    rpc.sent[3]!.go();
    expect((await again).succeeded && (await later).succeeded).toBe(true);
  });
});
