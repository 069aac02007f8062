/**
 * A commit whose answer was lost (etcd went away mid-call) may have been applied. Its marker
 * record (the first node it put) carries its id, so whether it was is found by looking through
 * the marker key's versions since the attempt read, newest first.
 */
import type { Etcd3 } from "etcd3";
import { TreeError } from "../errors.js";
import { isCompactedError, kvNum } from "./client.js";
import type { EtcdRecord } from "./layout.js";

/** A commit sent whose answer never came: its id, the first revision it could be at, its marker key. */
export interface LostCommit {
  id: string;
  fromRev: number;
  marker: string;
}

/** The first of `lost` applied at or before `upTo`, with its revision; undefined when none was. */
export async function findCommit(
  client: Etcd3,
  enc: (sk: string) => Buffer,
  lost: readonly LostCommit[],
  upTo: number,
): Promise<{ id: string; rev: number } | undefined> {
  for (const p of lost) {
    for (let r = upTo; r >= p.fromRev; ) {
      let res: Awaited<ReturnType<Etcd3["kv"]["range"]>>;
      try {
        res = await client.kv.range({ key: enc(p.marker), revision: r });
      } catch (err) {
        if (isCompactedError(err))
          throw new TreeError(
            "TREE_UNAVAILABLE",
            "etcd was unavailable and whether the write was applied is unknown",
          );
        throw err;
      }
      const kv = res.kvs[0];
      if (!kv) break;
      const mr = kvNum(kv, "mod_revision");
      if (mr < p.fromRev) break;
      if ((JSON.parse(kv.value.toString("utf8")) as EtcdRecord).w === p.id) return { id: p.id, rev: mr };
      r = mr - 1;
    }
  }
  return undefined;
}
