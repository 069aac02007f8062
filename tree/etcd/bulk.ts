/**
 * The etcd tree's export and import: an export reads the subtree as it was at one revision,
 * whatever is written meanwhile; an import commits in as few transactions as etcd's limits allow.
 */

import type { Etcd3 } from "etcd3";
import { exportTree, importReadOnly, parseImport } from "../ndjson.js";
import { parseDirKey } from "../path.js";
import type { Planner } from "../plan.js";
import { checkValueSize } from "../rules.js";
import type { ExportEntry, ImportResult, ListOptions, Tree, WriteResult } from "../types.js";
import { PENDING } from "../write-store.js";
import { headerRev } from "./client.js";
import { nodeSk } from "./layout.js";
import type { createEtcdReads } from "./reads.js";
import type { RetriedRead } from "./retry.js";
import type { EtcdTreeState } from "./tree-state.js";
import { TooManyOps, type Write } from "./write-loop.js";

type EtcdReads = ReturnType<typeof createEtcdReads>;

/** Exports `dir` of `tree` as it was at one revision: its reads pinned at the revision etcd answers now. */
export async function* exportSnapshot(
  deps: { client: Etcd3; state: EtcdTreeState; read: RetriedRead; reads: EtcdReads; tree: Tree },
  dir: string,
): AsyncGenerator<ExportEntry> {
  parseDirKey(dir);
  const { client, state, read, reads } = deps;
  const head = await read("export", () => client.kv.range({ key: state.enc(nodeSk(dir)) }));
  const rev = headerRev(head.header);
  const pinned = {
    ...deps.tree,
    get: (k: string) => reads.getNode(k, rev),
    list: (d: string, o?: ListOptions) => reads.list(d, o, rev),
    history: (k: string) => reads.history(k, rev),
  };
  yield* exportTree(pinned, dir);
}

/** Imports NDJSON entries in chunks of 64 lines; read-only keys are looked for before the first commits. */
export async function importEntries(
  deps: { state: EtcdTreeState; write: Write; plan: Planner; reads: EtcdReads; maxValueBytes: number },
  entries: AsyncIterable<ExportEntry | string> | Iterable<ExportEntry | string>,
  force: boolean,
): Promise<ImportResult> {
  deps.state.ensureOpen();
  const parsed = await parseImport(entries, (v) => checkValueSize(v, deps.maxValueBytes));
  // The chunks commit one by one: read-only keys are looked for before the first.
  if (!force)
    for (const e of parsed) if (!e.dir && (await deps.reads.getNode(e.key))?.ro) throw importReadOnly(e);
  let rev = deps.state.lastRev;
  for (let i = 0; i < parsed.length; i += 64)
    rev = (await importChunk(deps, parsed.slice(i, i + 64), force)).rev;
  return { imported: parsed.length, rev };
}

/** Imports in as few transactions as etcd's limits allow, halving a chunk that is too big. */
async function importChunk(
  deps: { write: Write; plan: Planner },
  items: Awaited<ReturnType<typeof parseImport>>,
  force: boolean,
): Promise<WriteResult> {
  try {
    return await deps.write((m) => {
      deps.plan.importItems(m, items, force);
      return { key: "/", rev: PENDING, version: 0 };
    }, "");
  } catch (err) {
    if (!(err instanceof TooManyOps) || items.length === 1) throw err;
    const half = Math.ceil(items.length / 2);
    await importChunk(deps, items.slice(0, half), force);
    return importChunk(deps, items.slice(half), force);
  }
}
