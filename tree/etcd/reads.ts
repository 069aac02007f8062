/**
 * The etcd tree's reads: a node (from this server's cache of etcd when it is current, see
 * local-reads.ts), a directory's children in pages from one revision, a value's retained
 * versions, a value at a past revision (for the watch); each at the latest revision or pinned at
 * one (export).
 */
import type { Etcd3 } from "etcd3";
import { childNodeKey, childrenRange, keyFromNodeKey } from "../encoding.js";
import { TreeError } from "../errors.js";
import { isSystemName, nameOf, parseDirKey, parseKey, parseValueKey } from "../path.js";
import { histFromRecord } from "../record.js";
import { emptyRoot, listLimit } from "../rules.js";
import type { HistoryEntry, ListChild, ListOptions, ListResult, TreeNode } from "../types.js";
import type { TreeValue } from "../value.js";
import { headerRev, kvNum } from "./client.js";
import { type EtcdRecord, histListSk, histSk, nodeOf, nodeSk } from "./layout.js";
import type { LocalReads } from "./local-reads.js";

export interface EtcdReadsDeps {
  client: Etcd3;
  prefix: string;
  local: LocalReads;
  /** Runs a read, retried while etcd is away (then TREE_UNAVAILABLE). */
  read<T>(what: string, fn: () => Promise<T>): Promise<T>;
  /** A revision etcd answered at. */
  seeRev(rev: number): void;
  /** Throws TREE_CLOSED once the tree is closed. */
  ensureOpen(): void;
}

export function createEtcdReads({ client, prefix, local, read, seeRev, ensureOpen }: EtcdReadsDeps) {
  const enc = (sk: string) => Buffer.from(prefix + sk, "utf8");

  /** A node: from the local cache when it is current (unless pinned or linearizable), else from etcd. */
  async function getNode(key: string, atRev?: number, linearizable = false): Promise<TreeNode | undefined> {
    parseKey(key);
    if (atRev === undefined && !linearizable) {
      ensureOpen();
      const hit = local.get(key);
      if (hit) return hit;
    }
    return read("get", async () => {
      const res = await client.kv.range({ key: enc(nodeSk(key)), ...(atRev ? { revision: atRev } : {}) });
      const rev = headerRev(res.header);
      seeRev(rev);
      const kv = res.kvs[0];
      if (!kv) return key === "/" ? emptyRoot() : undefined;
      const raw = kv.value.toString("utf8");
      const cr = kvNum(kv, "create_revision");
      const mr = kvNum(kv, "mod_revision");
      const node = nodeOf(key, JSON.parse(raw) as EtcdRecord, cr, mr);
      if (atRev !== undefined) return node;
      // The write path's record too: a later write of a key this server has read then reads
      // nothing before its commit (whose compare checks the record).
      local.noteRecord(nodeSk(key), { raw, cr, mr });
      return local.remember(key, node, rev, raw.length);
    });
  }

  async function list(dir: string, o: ListOptions = {}, atRev?: number): Promise<ListResult> {
    parseDirKey(dir);
    const limit = listLimit(o);
    return read("list", async () => {
      const range = childrenRange(dir);
      const after = o.after !== undefined ? childNodeKey(dir, o.after) : undefined;
      let from = after !== undefined && after >= range.gte ? `${after}\0` : range.gte;
      // The directory and the first page in one snapshot; later pages at the same revision.
      const page = Math.min(limit + 1, 256);
      let rev: number;
      let found: boolean;
      let batch: Awaited<ReturnType<Etcd3["kv"]["range"]>> | undefined;
      if (atRev) {
        const [d, b] = await Promise.all([
          client.kv.range({ key: enc(nodeSk(dir)), revision: atRev }),
          client.kv.range({ key: enc(from), range_end: enc(range.lt), limit: page, revision: atRev }),
        ]);
        [rev, found, batch] = [atRev, d.kvs.length > 0, b];
      } else {
        const first = await client.kv.txn({
          success: [
            { request_range: { key: enc(nodeSk(dir)) } },
            { request_range: { key: enc(from), range_end: enc(range.lt), limit: page } },
          ],
        });
        rev = headerRev(first.header);
        found = (first.responses[0]?.response_range?.kvs.length ?? 0) > 0;
        batch = first.responses[1]?.response_range;
      }
      seeRev(rev);
      if (dir !== "/" && !found) throw new TreeError("TREE_NOT_FOUND", `no directory ${dir}`, { key: dir });
      const children: ListChild[] = [];
      let hasMore = false;
      while (batch) {
        for (const kv of batch.kvs) {
          const key = keyFromNodeKey(kv.key.toString("utf8").slice(prefix.length));
          const name = nameOf(key);
          if (!o.system && isSystemName(name)) continue;
          if (children.length === limit) {
            hasMore = true;
            break;
          }
          const node = nodeOf(
            key,
            JSON.parse(kv.value.toString("utf8")) as EtcdRecord,
            kvNum(kv, "create_revision"),
            kvNum(kv, "mod_revision"),
          );
          if (node.kind !== "index" && o.values === false) {
            const { value: _omit, ...meta } = node;
            children.push({ ...meta, name });
          } else children.push({ ...node, name });
        }
        if (hasMore || !batch.more || batch.kvs.length === 0) break;
        from = `${batch.kvs[batch.kvs.length - 1]!.key.toString("utf8").slice(prefix.length)}\0`;
        batch = await client.kv.range({
          key: enc(from),
          range_end: enc(range.lt),
          limit: page,
          revision: rev,
        });
      }
      const res: ListResult = { key: dir, children };
      if (hasMore && children.length > 0) res.next = children[children.length - 1]!.name;
      return res;
    });
  }

  async function history(key: string, atRev?: number): Promise<HistoryEntry[]> {
    parseValueKey(key);
    return read("history", async () => {
      const at = atRev ? { revision: atRev } : {};
      const first = await client.kv.txn({
        success: [
          { request_range: { key: enc(nodeSk(key)), ...at } },
          { request_range: { key: enc(histListSk(key)), ...at } },
        ],
      });
      const rev = atRev ?? headerRev(first.header);
      seeRev(rev);
      const node = first.responses[0]?.response_range?.kvs[0];
      const kept = first.responses[1]?.response_range?.kvs[0];
      let revs: number[] = [];
      if (node) revs = (JSON.parse(node.value.toString("utf8")) as EtcdRecord).h ?? [];
      else if (kept) revs = JSON.parse(kept.value.toString("utf8")) as number[];
      const found = await Promise.all(
        revs.map((r) =>
          client.kv.range({ key: enc(histSk(key, r)), revision: rev }).then((res) => res.kvs[0]),
        ),
      );
      const out: HistoryEntry[] = [];
      for (const kv of found) if (kv) out.push(histFromRecord(key, kv.value.toString("utf8")));
      return out.reverse();
    });
  }

  async function valueAt(key: string, rev: number): Promise<TreeValue | undefined> {
    try {
      const res = await client.kv.range({ key: enc(nodeSk(key)), revision: rev });
      const kv = res.kvs[0];
      if (!kv) return undefined;
      const node = nodeOf(key, JSON.parse(kv.value.toString("utf8")) as EtcdRecord, 0, 0);
      return node.kind === "index" ? undefined : node.value;
    } catch {
      return undefined;
    }
  }

  return { getNode, list, history, valueAt };
}
