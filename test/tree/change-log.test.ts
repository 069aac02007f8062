/**
 * The change log of the tree on classic-level, as it lies on disk: one record per commit group,
 * the older one-record-per-revision layout still read, retention bounded by revision count.
 */
import { ClassicLevel } from "classic-level";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { int64, openTree, str, type Tree, type WatchBatch } from "../../tree/index.js";
import { expectTreeError, take } from "./helpers.js";
import { tempDir } from "./temp-dir.js";

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_v, i) => from + i);

/** The storage key of the log record starting at `rev`: `r` and the revision padded to 16 digits. */
const recordKey = (rev: number) => `r${String(rev).padStart(16, "0")}`;

type RawRecord = [key: string, value: string];

/** Runs `fn` on the store's LevelDB itself; the tree on it must be closed. */
async function withRawStore<T>(location: string, fn: (db: ClassicLevel<string, string>) => Promise<T>) {
  const db = new ClassicLevel<string, string>(location, { keyEncoding: "utf8", valueEncoding: "utf8" });
  await db.open();
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** Every change-log record of the store, in key order. */
function rawLog(location: string): Promise<RawRecord[]> {
  return withRawStore(location, (db) => db.iterator({ gte: "r", lt: "s" }).all());
}

/** The revisions a record in the group layout (`[[rev, events], …]`) holds. */
function revsIn([, value]: RawRecord): number[] {
  return (JSON.parse(value) as Array<[number, unknown]>).map(([rev]) => rev);
}

/**
 * Watches `/` from `fromRev`, expecting `count` replayed batches, then makes one more write and
 * expects it as the next batch: the replay held exactly `count` revisions, no more, no repeats.
 */
async function resumeThenFollow(
  tree: Tree,
  fromRev: number,
  count: number,
): Promise<{ replayed: WatchBatch[]; next: WatchBatch | undefined; nextRev: number }> {
  const watching = take(tree.watch("/", { fromRev }), count + 1);
  const { rev } = await tree.set("/after-resume", str("next"));
  const batches = await watching;
  return { replayed: batches.slice(0, count), next: batches[count], nextRev: rev };
}

describe("change log on classic-level", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const opened: Tree[] = [];
  const open = async (retainRevisions?: number) => {
    const tree = await openTree({
      backend: "classic",
      location: dir.path,
      ...(retainRevisions === undefined ? {} : { retainRevisions }),
    });
    opened.push(tree);
    return tree;
  };
  beforeEach(async () => {
    dir = await tempDir("byteseek-change-log-");
  });
  afterEach(async () => {
    for (const tree of opened.splice(0)) await tree.close().catch(() => {});
    await dir.remove();
  });

  /**
   * A write on its own, then `n` sets started together: the commit loop lets a turn of the event
   * loop pass before it takes a group, so the `n`, all queued in the same turn, form one group.
   */
  async function concurrentGroup(tree: Tree, n: number): Promise<{ primerRev: number; revs: number[] }> {
    const primer = await tree.set("/g/primer", str("primer"));
    const results = await Promise.all(range(0, n - 1).map((i) => tree.set(`/g/${i}`, str(`v${i}`))));
    return { primerRev: primer.rev, revs: results.map((r) => r.rev) };
  }

  it("writes 32 concurrent sets as one log record, and replays from the middle of it revision by revision", async () => {
    const tree = await open();
    await tree.mkindex("/g/");
    const live = take(tree.watch("/"), 33);
    const { primerRev, revs } = await concurrentGroup(tree, 32);
    const first = primerRev + 1;
    expect(revs).toEqual(range(first, first + 31));
    const seenLive = await live;
    expect(seenLive.map((b) => b.rev)).toEqual(range(primerRev, first + 31));
    // Each revision of the group is its own batch, holding its own set.
    for (const [i, rev] of revs.entries())
      expect(seenLive[i + 1]?.events).toEqual([
        { type: "put", key: `/g/${i}`, kind: "char/utf8", value: str(`v${i}`), rev, prevRev: 0, version: 1 },
      ]);

    const middle = first + 16;
    const { replayed, next, nextRev } = await resumeThenFollow(tree, middle, 16);
    expect(replayed).toEqual(seenLive.slice(17));
    expect(next?.rev).toBe(nextRev);
    expect(nextRev).toBe(first + 32);
    await tree.close();

    // On disk: the primer's record, one record for the whole group, then the write after it.
    const records = (await rawLog(dir.path)).filter(([key]) => key >= recordKey(primerRev));
    expect(records.map(([key]) => key)).toEqual([recordKey(primerRev), recordKey(first), recordKey(nextRev)]);
    expect(revsIn(records[1]!)).toEqual(revs);
  });

  it("keeps revision() and compactedRev() across close and reopen, and resumes from the middle of a group", async () => {
    const retain = 16;
    let tree = await open(retain);
    await tree.mkindex("/g/");
    const live = take(tree.watch("/", { fromRev: 1 }), 43);
    for (let i = 2; i <= 10; i++) await tree.set(`/s/${i}`, int64(i));
    const { primerRev, revs } = await concurrentGroup(tree, 32);
    const groupFirst = primerRev + 1;
    expect([primerRev, groupFirst, revs.at(-1)]).toEqual([11, 12, 43]);
    const seenLive = await live;
    expect(seenLive.map((b) => b.rev)).toEqual(range(1, 43));
    await tree.close();
    const revision = tree.revision();
    const compacted = tree.compactedRev();
    // The newest revision is the last of the newest record, not the revision it starts at.
    expect(revision).toBe(43);
    // The last 16 revisions start inside the group (at 28): its record is not wholly older, so it
    // stays whole, and the records before it went.
    expect(compacted).toBe(groupFirst);
    expect((await rawLog(dir.path)).map(([key]) => key)).toEqual([recordKey(groupFirst)]);

    tree = await open(retain);
    expect(tree.revision()).toBe(revision);
    expect(tree.compactedRev()).toBe(compacted);

    const middle = groupFirst + 20;
    const { replayed, next, nextRev } = await resumeThenFollow(tree, middle, revision - middle + 1);
    expect(replayed).toEqual(seenLive.slice(middle - 1));
    expect(nextRev).toBe(revision + 1);
    expect(next?.rev).toBe(revision + 1);
    expect(next?.events.map((e) => e.key)).toEqual(["/after-resume"]);
    await expectTreeError(() => take(tree.watch("/", { fromRev: compacted - 1 }), 1), "TREE_COMPACTED");
  });

  it("reads a log written one record per revision (the older layout), and goes on after it", async () => {
    let tree = await open();
    await tree.set("/a", str("x"));
    await tree.set("/n", int64(7));
    await tree.set("/a", str("y"));
    await tree.txn({
      success: [
        { op: "set", key: "/b", value: str("b") },
        { op: "set", key: "/c", value: str("c") },
      ],
    });
    await tree.del("/n");
    expect(tree.revision()).toBe(5);
    await tree.close();

    // What revisions 1..5 changed, as the older layout stored them: the event list alone.
    const older: Array<[number, object[]]> = [
      [1, [{ t: "put", key: "/a", k: "char/utf8", v: "x", p: 0, ver: 1 }]],
      [2, [{ t: "put", key: "/n", k: "int64", v: 7, p: 0, ver: 1 }]],
      [3, [{ t: "put", key: "/a", k: "char/utf8", v: "y", p: 1, ver: 2 }]],
      [
        4,
        [
          { t: "put", key: "/b", k: "char/utf8", v: "b", p: 0, ver: 1 },
          { t: "put", key: "/c", k: "char/utf8", v: "c", p: 0, ver: 1 },
        ],
      ],
      [5, [{ t: "delete", key: "/n", k: "int64", p: 2 }]],
    ];
    await withRawStore(dir.path, async (db) => {
      const written = await db.iterator({ gte: "r", lt: "s" }).all();
      // The same events the tree logged for them (in the group layout), so the store stays consistent.
      expect(written.flatMap(([, value]) => JSON.parse(value) as Array<[number, object[]]>)).toEqual(older);
      const batch = db.batch();
      for (const [key] of written) batch.del(key);
      for (const [rev, events] of older) batch.put(recordKey(rev), JSON.stringify(events));
      await batch.write();
    });
    expect((await rawLog(dir.path)).map(([key]) => key)).toEqual(range(1, 5).map(recordKey));

    tree = await open();
    expect(tree.revision()).toBe(5);
    expect(tree.compactedRev()).toBe(1);
    const watching = take(tree.watch("/", { fromRev: 1 }), 6);
    const written = await tree.set("/a", str("z"));
    expect(written).toMatchObject({ rev: 6, version: 3 });
    const batches = await watching;
    expect(batches).toEqual([
      {
        rev: 1,
        events: [
          { type: "put", key: "/a", kind: "char/utf8", value: str("x"), rev: 1, prevRev: 0, version: 1 },
        ],
      },
      {
        rev: 2,
        events: [{ type: "put", key: "/n", kind: "int64", value: int64(7), rev: 2, prevRev: 0, version: 1 }],
      },
      {
        rev: 3,
        events: [
          { type: "put", key: "/a", kind: "char/utf8", value: str("y"), rev: 3, prevRev: 1, version: 2 },
        ],
      },
      {
        rev: 4,
        events: [
          { type: "put", key: "/b", kind: "char/utf8", value: str("b"), rev: 4, prevRev: 0, version: 1 },
          { type: "put", key: "/c", kind: "char/utf8", value: str("c"), rev: 4, prevRev: 0, version: 1 },
        ],
      },
      { rev: 5, events: [{ type: "delete", key: "/n", kind: "int64", rev: 5, prevRev: 2 }] },
      {
        rev: 6,
        events: [
          { type: "put", key: "/a", kind: "char/utf8", value: str("z"), rev: 6, prevRev: 3, version: 3 },
        ],
      },
    ]);
    // A resume spanning both layouts, after a reopen, reads the same.
    await tree.close();
    tree = await open();
    expect(tree.revision()).toBe(6);
    expect(await take(tree.watch("/", { fromRev: 4 }), 3)).toEqual(batches.slice(3));
  });

  it("keeps the log bounded under retainRevisions while every retained revision stays replayable", async () => {
    const retain = 50;
    const writes = 1500; // enough for the list of records in memory to be compacted too
    const tree = await open(retain);
    const valueAt = new Map<number, number>();
    for (let i = 0; i < writes; i++) valueAt.set((await tree.set("/k", int64(i))).rev, i);
    const revision = tree.revision();
    expect(revision).toBe(writes);
    const oldest = tree.compactedRev();
    expect(oldest).toBeGreaterThan(1);
    expect(oldest).toBeLessThanOrEqual(revision - (retain - 1));

    const replay = await take(tree.watch("/", { fromRev: oldest }), revision - oldest + 1);
    expect(replay.map((b) => b.rev)).toEqual(range(oldest, revision));
    for (const batch of replay)
      expect(batch.events.map((e) => [e.key, e.value])).toEqual([["/k", int64(valueAt.get(batch.rev)!)]]);
    await expectTreeError(() => take(tree.watch("/", { fromRev: oldest - 1 }), 1), "TREE_COMPACTED");

    await tree.close();
    const records = await rawLog(dir.path);
    // One revision per record here (sequential writes), and each write's batch deleted the record
    // that fell out: exactly the last `retain` revisions are on disk, compactedRev() to revision().
    expect(oldest).toBe(revision - retain + 1);
    expect(records.flatMap(revsIn)).toEqual(range(oldest, revision));
  });

  it("sheds the surplus of a smaller retention over the next writes, a bounded number of records each", async () => {
    let tree = await open(1000);
    for (let i = 0; i < 300; i++) await tree.set(`/k/${i % 5}`, int64(i));
    await tree.close();
    expect(await rawLog(dir.path)).toHaveLength(300);

    tree = await open(10);
    expect(tree.compactedRev()).toBe(1);
    const counts: number[] = [];
    for (let i = 0; i < 6; i++) {
      await tree.set("/k/next", int64(i));
      counts.push(tree.revision() - tree.compactedRev() + 1); // one revision a record
    }
    await tree.close();
    // 300 records and one more per write; 64 at most go with each write, until 10 are left.
    expect(counts).toEqual([237, 174, 111, 48, 10, 10]);
    const records = await rawLog(dir.path);
    expect(records.flatMap(revsIn)).toEqual(range(297, 306));
    tree = await open(10);
    expect(tree.compactedRev()).toBe(297);
    await expectTreeError(() => take(tree.watch("/", { fromRev: 296 }), 1), "TREE_COMPACTED");
    expect((await take(tree.watch("/", { fromRev: 297 }), 10)).map((b) => b.rev)).toEqual(range(297, 306));
  });

  it("ends a watch that is replaying history, without an error, when the tree closes under it", async () => {
    const tree = await open();
    for (let i = 0; i < 300; i++) await tree.set(`/r/${i % 7}`, int64(i));
    const iterator = tree.watch("/", { fromRev: 1 })[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.rev).toBe(1);
    const closing = tree.close();
    const outcomes: string[] = [];
    for (;;) {
      const step = await iterator.next().then(
        (r) => (r.done ? "done" : "batch"),
        (err: unknown) => String((err as { code?: string }).code),
      );
      outcomes.push(step);
      if (step !== "batch") break;
    }
    await closing;
    // Batches already read may still come; then the watch ends, or says the tree is closed.
    expect(["done", "TREE_CLOSED"]).toContain(outcomes.at(-1));
  });
});
