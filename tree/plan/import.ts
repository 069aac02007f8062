/** An import's lines planned in one write: directories made, values set (read-only ones only with `force`) and restored. */
import { histListKey, nodeKey } from "../encoding.js";
import { type ImportItem, importReadOnly } from "../ndjson.js";
import type { WriteStore } from "../write-store.js";
import { ancestors } from "./dirs.js";
import { restore } from "./history.js";
import { mkindex, type PlanConfig, set } from "./ops.js";

export function importItems(cfg: PlanConfig, s: WriteStore, items: ImportItem[], force: boolean): void {
  // Everything the lines may read, fetched in one go.
  s.prefetch(() => {
    const sks = new Set<string>();
    for (const e of items) {
      sks.add(nodeKey(e.key));
      if (!e.dir) sks.add(histListKey(e.key));
      for (const a of ancestors(e.key)) sks.add(nodeKey(a));
    }
    return [...sks];
  });
  for (const e of items) {
    if (e.dir) mkindex(s, e.key);
    else {
      if (!force && s.readNode(e.key)?.rec.ro) throw importReadOnly(e);
      set(cfg, s, e.key, e.value, {
        force: true,
        ...(e.ro === undefined ? {} : { ro: e.ro }),
        ...(e.vid ? { vid: e.vid } : e.disown ? { disown: true } : {}),
      });
      if (e.restore) restore(cfg.history, s, e.key, e.restore);
    }
  }
}
