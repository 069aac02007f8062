/**
 * The change log of the LevelDB tree: what each revision changed, kept for watchers to resume from.
 *
 * One record per commit group, not per revision: `r<first rev of the group>` holds
 * `[[rev, events], …]` for every revision the group wrote, so a group of 32 writes adds one entry
 * to its batch, not 32. (A record holding a bare event list is the older one-revision layout; it is
 * still read.) Retention is by revision count: once the log holds `retain` plus a slack of
 * revisions, the records wholly older than the last `retain` revisions go in one range clear, off
 * the write path, instead of one delete per write.
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
  /** Adds one group's revisions to the batch that commits them. */
  write(batch: AbstractChainedBatch<Db, string, string>, revs: LoggedRevision[]): void;
  /** Called once the batch is on disk; may start a compaction in the background. */
  committedUpTo(rev: number): void;
  /** The retained revisions in [from, to], oldest first, as the snapshot sees them. */
  read(from: number, to: number, snapshot: AbstractSnapshot): AsyncGenerator<LoggedRevision>;
  /** Waits for a running compaction (before the store closes). */
  settle(): Promise<void>;
}

const LOG_END = String.fromCharCode(LOG.charCodeAt(0) + 1);

export async function openChangeLog(db: Db, retain: number): Promise<ChangeLog> {
  // Compact once the slack is used up: rarely enough to be cheap, often enough to stay bounded.
  const slack = Math.min(1024, Math.max(1, Math.ceil(retain / 8)));
  const [lastKey, lastRaw] =
    (await db.iterator({ gte: LOG, lt: LOG_END, reverse: true, limit: 1 }).all())[0] ?? [];
  const [firstKey] = await db.keys({ gte: LOG, lt: LOG_END, limit: 1 }).all();
  let committed = lastKey === undefined ? 0 : (decode(lastKey, lastRaw!).at(-1)?.rev ?? revOf(lastKey));
  let oldest = firstKey === undefined ? 1 : revOf(firstKey);
  let compaction: Promise<void> | undefined;

  async function compact(): Promise<void> {
    const keep = committed - retain + 1;
    // The record holding `keep` may start before it; it stays whole.
    const [start] = await db.keys({ gte: LOG, lte: logKey(keep), reverse: true, limit: 1 }).all();
    if (start === undefined || revOf(start) <= oldest) return;
    // Raised before the clear starts: a watcher checking against it never reads a record being cleared.
    oldest = revOf(start);
    await db.clear({ gte: LOG, lt: start });
  }

  return {
    get committed() {
      return committed;
    },
    get oldest() {
      return oldest;
    },
    write(batch, revs) {
      if (revs.length === 0) return;
      const record = revs.map(({ rev, events }) => [rev, events]);
      batch.put(logKey(revs[0]!.rev), JSON.stringify(record));
    },
    committedUpTo(rev) {
      committed = rev;
      if (compaction || committed - oldest + 1 <= retain + slack) return;
      compaction = compact()
        .catch(() => {
          // A failed clear leaves more log than needed; the next commit tries again.
        })
        .finally(() => {
          compaction = undefined;
        });
    },
    async *read(from, to, snapshot) {
      const [start] = await db.keys({ gte: LOG, lte: logKey(from), reverse: true, limit: 1, snapshot }).all();
      for await (const [key, raw] of db.iterator({ gte: start ?? logKey(from), lte: logKey(to), snapshot })) {
        for (const entry of decode(key, raw)) if (entry.rev >= from && entry.rev <= to) yield entry;
      }
    },
    async settle() {
      await compaction;
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
