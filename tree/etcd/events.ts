/**
 * The change feed on etcd is etcd's own watch of the tree's node keys: every tree write is one
 * etcd transaction, so one revision, whose node puts and deletes arrive together. Most writes
 * (sets, appends, mkindex, imports: puts of values and of new directories) are rebuilt from the
 * node records alone; any other (a delete, a deltree, a key written twice in one txn) carries its
 * events in the first node record it writes (`x`), which a watcher reads instead. Both sides run
 * `eventsOfPuts`, so a write carries `x` exactly when the rebuild would differ.
 */
import { keyFromNodeKey } from "../encoding.js";
import { type EventRecord, eventFromRecord } from "../record.js";
import type { WatchEvent } from "../types.js";
import { PENDING } from "../write-store.js";
import type { EtcdRecord } from "./layout.js";
import type { WatchEvent as EtcdEvent } from "./wire.js";

/** A node record a write puts, in the order it staged it. `created`: the key did not exist before. */
export interface StagedPut {
  sk: string;
  rec: EtcdRecord;
  created: boolean;
}

/** The events a watcher rebuilds from a revision's node puts: new directories and values written. */
export function eventsOfPuts(puts: readonly StagedPut[]): EventRecord[] {
  const out: EventRecord[] = [];
  for (const { sk, rec, created } of puts) {
    const key = keyFromNodeKey(sk);
    if (key === "/") continue;
    if (rec.k === "index") {
      // A directory's record is rewritten when its child count moves: not a change of the directory.
      if (created) out.push({ t: "put", key, k: "index", ver: 1, p: 0 });
    } else out.push({ t: "put", key, k: rec.k, v: rec.v ?? null, p: rec.pr ?? 0, ver: rec.ver });
  }
  return out;
}

export function sameEvents(a: readonly EventRecord[], b: readonly EventRecord[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.t !== y.t || x.key !== y.key || x.k !== y.k || x.p !== y.p || x.ver !== y.ver) return false;
    if (x.v !== y.v && JSON.stringify(x.v) !== JSON.stringify(y.v)) return false;
  }
  return true;
}

/**
 * One revision's changes as the tree's events, decoded once for every watcher of the tree.
 * `lazy`: keys whose value was too large to carry (read at `rev` by a watcher that wants it).
 */
export interface FeedRevision {
  rev: number;
  events: WatchEvent[];
  lazy?: Set<string>;
}

/** A watch response's events, one group per revision, in order. */
export function byRevision(events: EtcdEvent[]): EtcdEvent[][] {
  const groups: EtcdEvent[][] = [];
  let rev = -1;
  for (const ev of events) {
    if (!ev.kv) continue;
    const r = ev.kv.mod_revision;
    if (r !== rev) groups.push([]);
    rev = r;
    groups[groups.length - 1]!.push(ev);
  }
  return groups;
}

/** A field name only a record carrying its write's events holds (a value's own quotes are escaped). */
const CARRIED = Buffer.from('"x":', "utf8");

/**
 * One revision's node changes as the tree's events. A revision holds one write, or several
 * committed together (group-commit.ts); each write's node puts start with its marker (the record
 * carrying its id `w`), so the puts are cut there and each write's events are the ones it carries
 * or the ones its own puts rebuild. A rebuilt event concerns only the key put, so when no record
 * carries events, the records of keys nobody watches (`wanted`) are not decoded at all.
 */
export function revisionOf(
  prefixLength: number,
  group: EtcdEvent[],
  wanted: (key: string) => boolean = () => true,
): FeedRevision {
  const rev = group[0]!.kv.mod_revision;
  const carries = group.some((ev) => ev.type === "Put" && ev.kv.value.includes(CARRIED));
  const writes: StagedPut[][] = [];
  for (const ev of group) {
    if (ev.type !== "Put") continue;
    const sk = ev.kv.key.toString("utf8").slice(prefixLength);
    if (!carries && !wanted(keyFromNodeKey(sk))) continue;
    const rec = JSON.parse(ev.kv.value.toString("utf8")) as EtcdRecord;
    const put = { sk, rec, created: ev.kv.version === 1 };
    if (rec.w !== undefined || writes.length === 0) writes.push([put]);
    else writes[writes.length - 1]!.push(put);
  }
  const records: EventRecord[] = [];
  const lazy = new Set<string>();
  for (const puts of writes) {
    const carried = puts.find((p) => p.rec.x)?.rec.x;
    if (!carried) records.push(...eventsOfPuts(puts));
    else
      for (const r of carried) {
        records.push(r);
        if (r.lz === 1) lazy.add(r.key);
      }
  }
  const events = records.map((r) => {
    const ev = eventFromRecord(rev, r);
    if (ev.prevRev === PENDING) ev.prevRev = rev;
    return ev;
  });
  return lazy.size > 0 ? { rev, events, lazy } : { rev, events };
}
