/**
 * The change feed on etcd is etcd's own watch of the tree's node keys: every tree write is one
 * etcd transaction, so one revision, whose node puts and deletes arrive together. Most writes
 * (sets, appends, mkindex, imports: puts of values and of new directories) are rebuilt from the
 * node records alone; any other (a delete, a deltree, a key written twice in one txn) carries its
 * events in the first node record it writes (`x`), which a watcher reads instead. Both sides run
 * `eventsOfPuts`, so a write carries `x` exactly when the rebuild would differ.
 */
import { keyFromNodeKey } from "../encoding.js";
import type { EventRecord } from "../record.js";
import type { EtcdRecord } from "./layout.js";

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
    if (JSON.stringify(x.v) !== JSON.stringify(y.v)) return false;
  }
  return true;
}
