import { describe, expect, it } from "vitest";
import type { TreeError } from "../../../tree/errors.js";
import type { WatchBatch, WatchEvent } from "../../../tree/types.js";
import { int64, str } from "../../../tree/value.js";
import type { SuiteContext } from "../context.js";
import { expectTreeError, take, tick } from "../helpers.js";

const put = (event: Omit<WatchEvent, "type">) => expect.objectContaining({ type: "put", ...event });
/** Batches until `n` events have come. */
async function takeEvents(iterable: AsyncIterable<WatchBatch>, n: number): Promise<WatchBatch[]> {
  const out: WatchBatch[] = [];
  let seen = 0;
  for await (const batch of iterable) {
    out.push(batch);
    seen += batch.events.length;
    if (seen >= n) break;
  }
  return out;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_v, i) => from + i);

export function watchSuite(ctx: SuiteContext): void {
  describe("watch", () => {
    it("replays changes from fromRev as put and delete events with kind, value, version and prevRev", async () => {
      const tree = await ctx.open();
      await tree.mkindex("/w/");
      const r0 = tree.revision();
      await tree.set("/w/a", str("1"));
      await tree.set("/w/a", str("2"));
      await tree.del("/w/a");
      await tree.set("/w/n", int64(-5n));
      const batches = await take(tree.watch("/w/", { fromRev: r0 + 1 }), 4);
      expect(batches.map((b) => b.rev)).toEqual(range(r0 + 1, r0 + 4));
      expect(batches.map((b) => b.events)).toEqual([
        [put({ key: "/w/a", kind: "char/utf8", value: str("1"), rev: r0 + 1, prevRev: 0, version: 1 })],
        [put({ key: "/w/a", kind: "char/utf8", value: str("2"), rev: r0 + 2, prevRev: r0 + 1, version: 2 })],
        [expect.objectContaining({ type: "delete", key: "/w/a", rev: r0 + 3, prevRev: r0 + 2 })],
        [put({ key: "/w/n", kind: "int64", value: int64(-5n), rev: r0 + 4, prevRev: 0, version: 1 })],
      ]);
    });

    it("never splits the events of one revision: a txn is one batch, a deltree one event", async () => {
      const tree = await ctx.open();
      await tree.mkindex("/w/");
      await tree.set("/w/d/x", str("x"));
      await tree.set("/w/d/y/z", str("z"));
      const r0 = tree.revision();
      await tree.txn({
        success: [
          { op: "set", key: "/w/1", value: int64(1n) },
          { op: "set", key: "/w/2", value: int64(2n) },
          { op: "set", key: "/w/3", value: int64(3n) },
        ],
      });
      await tree.deltree("/w/d/");
      const [txnBatch, deltreeBatch] = await take(tree.watch("/w/", { fromRev: r0 + 1 }), 2);
      expect(txnBatch?.rev).toBe(r0 + 1);
      expect(txnBatch?.events.map((e) => [e.type, e.key, e.rev])).toEqual([
        ["put", "/w/1", r0 + 1],
        ["put", "/w/2", r0 + 1],
        ["put", "/w/3", r0 + 1],
      ]);
      expect(deltreeBatch?.events).toEqual([
        expect.objectContaining({ type: "deltree", key: "/w/d/", rev: r0 + 2 }),
      ]);
    });

    it("gives a directory's delete and deltree events its modRev as get reports it (its creation), however its count moved", async () => {
      // Both engines agree: a directory's modRev is the revision that created it, so the prevRev
      // of the event that removes it is that revision, even after children came and went.
      const tree = await ctx.open();
      await tree.mkindex("/w/");
      await tree.set("/w/e/x", str("x"));
      await tree.set("/w/d/x", str("x"));
      await tree.set("/w/d/y", str("y"));
      await tree.del("/w/e/x");
      const e = await tree.get("/w/e/");
      const d = await tree.get("/w/d/");
      expect(e?.modRev).toBe(e?.createRev);
      expect(d?.modRev).toBe(d?.createRev);
      const r0 = tree.revision();
      await tree.del("/w/e/");
      await tree.deltree("/w/d/");
      const batches = await take(tree.watch("/w/", { fromRev: r0 + 1 }), 2);
      expect(batches.map((b) => b.events.map((ev) => [ev.type, ev.key, ev.prevRev]))).toEqual([
        [["delete", "/w/e/", e?.createRev]],
        [["deltree", "/w/d/", d?.createRev]],
      ]);
    });

    it("delivers only changes under its prefix, and no batch for a revision with none", async () => {
      const tree = await ctx.open();
      await tree.mkindex("/w/");
      const r0 = tree.revision();
      await tree.set("/x/outside", str("no"));
      await tree.set("/wx", str("no: a string prefix, not under /w/"));
      await tree.set("/w/inside", str("yes"));
      await tree.txn({
        success: [
          { op: "set", key: "/x/other", value: str("no") },
          { op: "set", key: "/w/mixed", value: str("yes") },
        ],
      });
      const batches = await take(tree.watch("/w/", { fromRev: r0 + 1 }), 2);
      expect(batches.map((b) => [b.rev, b.events.map((e) => e.key)])).toEqual([
        [r0 + 3, ["/w/inside"]],
        [r0 + 4, ["/w/mixed"]],
      ]);
      const all = await take(tree.watch("/", { fromRev: r0 + 1 }), 4);
      expect(all.map((b) => b.rev)).toEqual(range(r0 + 1, r0 + 4));
    });

    it("includes the parent directories a set creates in that revision's batch", async () => {
      const tree = await ctx.open();
      const r0 = tree.revision();
      await tree.set("/w/new/leaf", str("leaf"));
      const [batch] = await take(tree.watch("/w/", { fromRev: r0 + 1 }), 1);
      expect(batch?.rev).toBe(r0 + 1);
      const keys = batch?.events.map((e) => e.key) ?? [];
      expect(keys).toContain("/w/new/leaf");
      expect(batch?.events.every((e) => e.rev === r0 + 1)).toBe(true);
    });

    it("passes from replay to live without a gap or a duplicate, in revision order", async () => {
      const tree = await ctx.open();
      await tree.mkindex("/w/");
      const r0 = tree.revision();
      for (let i = 0; i < 3; i++) await tree.set(`/w/before${i}`, int64(BigInt(i)));
      const got: WatchBatch[] = [];
      const live = 40;
      for await (const batch of tree.watch("/w/", { fromRev: r0 + 1 })) {
        got.push(batch);
        if (got.length === 1) for (let i = 0; i < live; i++) await tree.set(`/w/after${i}`, int64(BigInt(i)));
        if (got.length === 3 + live) break;
      }
      expect(got.map((b) => b.rev)).toEqual(range(r0 + 1, r0 + 3 + live));
      expect(got.flatMap((b) => b.events.map((e) => e.key))).toEqual([
        ...range(0, 2).map((i) => `/w/before${i}`),
        ...range(0, live - 1).map((i) => `/w/after${i}`),
      ]);
    });

    it("delivers every revision once and in order while 32 writers write concurrently", async () => {
      const tree = await ctx.open();
      await tree.mkindex("/w/");
      const r0 = tree.revision();
      // 64 writes, and the directory /w/q/ the first append makes.
      const watching = takeEvents(tree.watch("/w/", { fromRev: r0 + 1 }), 65);
      const results = await Promise.all(
        Array.from({ length: 64 }, (_v, i) =>
          i % 2 === 0 ? tree.set(`/w/${i}`, int64(BigInt(i))) : tree.append("/w/q/", int64(BigInt(i))),
        ),
      );
      const batches = await watching;
      // Writes to different keys may share a revision where the store commits them together (group
      // commit on etcd): the revisions are still consecutive, each delivered once, in order.
      const revs = [...new Set(results.map((r) => r.rev))].sort((a, b) => a - b);
      expect(revs).toEqual(range(r0 + 1, r0 + revs.length));
      expect(batches.map((b) => b.rev)).toEqual(revs);
      const byRev = new Map(batches.map((b) => [b.rev, b.events.map((e) => e.key)]));
      for (const res of results) expect(byRev.get(res.rev)).toContain(res.key);
    });

    it("follows live changes when no fromRev is given, without replaying older ones", async () => {
      const tree = await ctx.open();
      await tree.set("/w/old", str("old"));
      const iterator = tree.watch("/w/")[Symbol.asyncIterator]();
      const first = iterator.next();
      let settled = false;
      first.then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      // The watcher may need a few turns of the event loop to subscribe: write until it sees one (bounded).
      for (let i = 0; i < 200 && !settled; i++) {
        await tree.set("/w/live", int64(BigInt(i)));
        await tick();
      }
      const result = await first;
      expect(result.done).toBe(false);
      const batch: WatchBatch | undefined = result.value;
      expect(batch?.events.map((e) => e.key)).toEqual(["/w/live"]);
      await iterator.return?.();
    });

    it("replays exactly what was missed when resumed from a retained revision", async () => {
      const tree = await ctx.open();
      await tree.mkindex("/w/");
      const r0 = tree.revision();
      const n = 8;
      const liveWatch = take(tree.watch("/w/", { fromRev: r0 + 1 }), n);
      await tree.set("/w/a", str("a"));
      await tree.set("/w/b/c", int64(3n));
      await tree.set("/x/out", str("not watched"));
      await tree.txn({
        success: [
          { op: "set", key: "/w/a", value: str("a2") },
          { op: "set", key: "/w/d", value: str("d") },
          { op: "set", key: "/x/y", value: str("not watched") },
        ],
      });
      await tree.del("/w/a");
      await tree.append("/w/q/", str("q0"));
      await tree.deltree("/w/b/");
      await tree.set("/w/a", str("a3"), { ro: true });
      await tree.mkindex("/w/e/");
      const seenLive = await liveWatch;
      expect(seenLive).toHaveLength(n);
      expect(await take(tree.watch("/w/", { fromRev: r0 + 1 }), n)).toEqual(seenLive);
      const middle = seenLive[3]?.rev ?? 0;
      expect(await take(tree.watch("/w/", { fromRev: middle }), n - 3)).toEqual(seenLive.slice(3));
      // Resuming just after the last revision seen gets the next change and nothing before it.
      const next = take(tree.watch("/w/", { fromRev: tree.revision() + 1 }), 1);
      await tree.set("/w/z", str("z"));
      expect((await next).map((b) => b.events.map((e) => e.key))).toEqual([["/w/z"]]);
    });

    it("answers TREE_COMPACTED for a revision no longer retained, naming where to re-list from", async () => {
      const tree = await ctx.open({ retainRevisions: 5 });
      const start = tree.revision();
      for (let i = 0; i < 20; i++) await tree.set("/w/k", int64(BigInt(i)));
      const compacted = tree.compactedRev();
      expect(compacted).toBeGreaterThan(start + 1);
      expect(compacted).toBeLessThanOrEqual(tree.revision() - 4);
      const err: TreeError = await expectTreeError(
        () => take(tree.watch("/w/", { fromRev: start + 1 }), 1),
        "TREE_COMPACTED",
      );
      const numbers = Object.values(err.details).filter((v): v is number => typeof v === "number");
      expect(numbers.some((v) => v >= compacted - 1 && v <= tree.revision())).toBe(true);
      await expectTreeError(() => take(tree.watch("/w/", { fromRev: compacted - 1 }), 1), "TREE_COMPACTED");
      const replay = await take(tree.watch("/w/", { fromRev: compacted }), tree.revision() - compacted + 1);
      expect(replay.map((b) => b.rev)).toEqual(range(compacted, tree.revision()));
      expect(replay.at(-1)?.events[0]?.value).toEqual(int64(19n));
    });

    it("ends the iterator, without an error, when its signal aborts", async () => {
      const tree = await ctx.open();
      await tree.mkindex("/w/");
      const controller = new AbortController();
      const r0 = tree.revision();
      await tree.set("/w/a", str("a"));
      const got: WatchBatch[] = [];
      for await (const batch of tree.watch("/w/", { fromRev: r0 + 1, signal: controller.signal })) {
        got.push(batch);
        controller.abort();
      }
      expect(got).toHaveLength(1);

      // Aborting while the iterator waits for a change ends it too.
      const idle = new AbortController();
      const waiting = (async () => {
        const seen: WatchBatch[] = [];
        for await (const batch of tree.watch("/w/", { fromRev: tree.revision() + 1, signal: idle.signal }))
          seen.push(batch);
        return seen;
      })();
      for (let i = 0; i < 5; i++) await tick();
      idle.abort();
      expect(await waiting).toEqual([]);
    });

    it("ends a waiting iterator when the tree closes", async () => {
      const tree = await ctx.open();
      const iterator = tree.watch("/", { fromRev: tree.revision() + 1 })[Symbol.asyncIterator]();
      const pending = iterator.next();
      for (let i = 0; i < 5; i++) await tick();
      await tree.close();
      const outcome = await pending.then(
        (r) => (r.done ? "done" : "batch"),
        (err: unknown) => (err as TreeError).code,
      );
      expect(["done", "TREE_CLOSED"]).toContain(outcome);
    });
  });
}
