/**
 * The change log of the LevelDB tree: what each revision changed, kept for watchers to resume from.
 *
 * One record per commit group, not per revision: `r<first rev of the group>` holds
 * `[[rev, events], …]` for every revision the group wrote, so a group of 32 writes adds one entry
 * to its batch, not 32. (A record holding a bare event list is the older one-revision layout; it is
 * still read.) Retention is by revision count: the batch that writes a group's record also deletes
 * the records wholly older than the last `retain` revisions (a few at a time), so the log is
 * trimmed as it grows, in the writes it already makes, rather than by a write of its own that
 * the commits would queue behind.
 */
import type { AbstractChainedBatch, AbstractSnapshot } from "abstract-level";
import { LOG, logKey } from "./encoding.js";
import type { Db } from "./mutation.js";
import type { EventRecord } from "./record.js";

export interface LoggedRevision {
  rev: number;
  events: EventRecord[];
}

export interface ChangeLog {
  /** The newest revision written. */
  readonly committed: number;
  /** The oldest revision still retained: resuming from an older one is refused. */
  readonly oldest: number;
  /**
   * Adds one group's revisions to the batch that commits them, with the deletion of records that
   * fell out of retention.
   */
  write(batch: AbstractChainedBatch<Db, string, string>, revs: LoggedRevision[]): void;
  /** Called once the batch of the last `write` is on disk. */
  committedUpTo(rev: number): void;
  /** The retained revisions in [from, to], oldest first, as the snapshot sees them. */
  read(from: number, to: number, snapshot: AbstractSnapshot): AsyncGenerator<LoggedRevision>;
}

const LOG_END = String.fromCharCode(LOG.charCodeAt(0) + 1);

/**
 * Records one batch deletes at most: a store reopened with a smaller retention sheds its surplus
 * over the next writes instead of in one large batch.
 */
const MAX_DROPPED_PER_BATCH = 64;

export async function openChangeLog(db: Db, retain: number): Promise<ChangeLog> {
  // The first revision of each record on disk, oldest first (about `retain` records at most), from
  // `starts[head]` on: the records dropped since the array was last compacted sit before `head`.
  const starts = (await db.keys({ gte: LOG, lt: LOG_END }).all()).map(revOf);
  let head = 0;
  const [lastKey, lastRaw] =
    (await db.iterator({ gte: LOG, lt: LOG_END, reverse: true, limit: 1 }).all())[0] ?? [];
  let committed = lastKey === undefined ? 0 : (decode(lastKey, lastRaw!).at(-1)?.rev ?? revOf(lastKey));
  let oldest = starts[0] ?? 1;
  /** What the batch of the last `write` does to `starts` once it is on disk. */
  let pending: { start: number; dropped: number } | undefined;

  return {
    get committed() {
      return committed;
    },
    get oldest() {
      return oldest;
    },
    write(batch, revs) {
      pending = undefined;
      if (revs.length === 0) return;
      const start = revs[0]!.rev;
      const record = revs.map(({ rev, events }) => [rev, events]);
      batch.put(logKey(start), JSON.stringify(record));
      // A record is wholly older than the revisions kept when the one after it starts at or
      // before the first of them; the record holding that first revision stays whole.
      const keep = revs[revs.length - 1]!.rev - retain + 1;
      const after = (i: number) => (i + 1 < starts.length ? starts[i + 1]! : start);
      let dropped = 0;
      for (
        let i = head;
        i < starts.length && dropped < MAX_DROPPED_PER_BATCH && after(i) <= keep;
        i++, dropped++
      )
        batch.del(logKey(starts[i]!));
      // Raised before the batch goes out: a watcher checking against it never looks for a record
      // this batch deletes. (Should the batch fail, a few revisions are refused a little early.)
      if (dropped > 0) oldest = after(head + dropped - 1);
      pending = { start, dropped };
    },
    committedUpTo(rev) {
      committed = rev;
      if (!pending) return;
      head += pending.dropped;
      starts.push(pending.start);
      pending = undefined;
      if (head > 1024 && head * 2 > starts.length) {
        starts.splice(0, head);
        head = 0;
      }
    },
    async *read(from, to, snapshot) {
      const [start] = await db.keys({ gte: LOG, lte: logKey(from), reverse: true, limit: 1, snapshot }).all();
      for await (const [key, raw] of db.iterator({ gte: start ?? logKey(from), lte: logKey(to), snapshot })) {
        for (const entry of decode(key, raw)) if (entry.rev >= from && entry.rev <= to) yield entry;
      }
    },
  };
}

function revOf(key: string): number {
  return Number(key.slice(LOG.length));
}

function decode(key: string, raw: string): LoggedRevision[] {
  const parsed = JSON.parse(raw) as Array<[number, EventRecord[]]> | EventRecord[];
  if (parsed.length > 0 && !Array.isArray(parsed[0]))
    return [{ rev: revOf(key), events: parsed as EventRecord[] }];
  return (parsed as Array<[number, EventRecord[]]>).map(([rev, events]) => ({ rev, events }));
}
