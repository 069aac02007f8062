/**
 * Brings a store written by an older byteseek to the current layout (STORE_FORMAT, kept in the
 * root record), once, when it opens.
 *
 * 1 → 2: a directory carries `hk` when a value below it was deleted with its history kept, so that
 * a new key elsewhere skips looking for kept history. A store from before has the history lists
 * (`H` + key) but no flags: each list's nearest existing directory gets one.
 */
import { HIST_LIST, nodeKey, parentOf } from "./encoding.js";
import { type Db, readRaw } from "./mutation.js";
import { type NodeRecord, STORE_FORMAT } from "./record.js";

export async function upgradeLayout(db: Db): Promise<void> {
  const rootKey = nodeKey("/");
  const rootRaw = readRaw(db, rootKey);
  if (rootRaw === undefined) return; // an empty store: its root is made in the current layout
  if (((JSON.parse(rootRaw) as NodeRecord).fmt ?? 1) >= STORE_FORMAT) return;
  const changed = new Map<string, NodeRecord>();
  const recordOf = (sk: string): NodeRecord | undefined => {
    const marked = changed.get(sk);
    if (marked) return marked;
    const raw = readRaw(db, sk);
    return raw === undefined ? undefined : (JSON.parse(raw) as NodeRecord);
  };
  const end = String.fromCharCode(HIST_LIST.charCodeAt(0) + 1);
  for await (const listKey of db.keys({ gte: HIST_LIST, lt: end })) {
    for (let dir = parentOf(listKey.slice(HIST_LIST.length)); dir !== undefined; dir = parentOf(dir)) {
      const sk = nodeKey(dir);
      const rec = recordOf(sk);
      if (rec === undefined) continue; // removed with its directory: the nearest one above holds it
      if (rec.hk !== 1) changed.set(sk, { ...rec, hk: 1 });
      break;
    }
  }
  const batch = db.batch();
  for (const [sk, rec] of changed) if (sk !== rootKey) batch.put(sk, JSON.stringify(rec));
  batch.put(rootKey, JSON.stringify({ ...recordOf(rootKey), fmt: STORE_FORMAT }));
  await batch.write();
}
