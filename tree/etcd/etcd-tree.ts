/**
 * The tree on etcd v3: the same `Tree` contract as the LevelDB tree, shared by any number of
 * byteseek processes. Every write is one etcd transaction guarded by compares on everything it
 * read (see attempt.ts), retried on conflict; the global revision is etcd's. The rules of every
 * write are tree/plan.ts's, its reads are reads.ts's; what stays here (over 400 lines) is the
 * write loop — retries, lanes, finding a commit whose answer was lost, compaction — kept in one
 * piece while the etcd write path's throughput work changes it.
 */
import { randomBytes } from "node:crypto";
import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import { TreeError } from "../errors.js";
import { fastLanesByDefault } from "../fast-lanes.js";
import { type HistoryLimit, historyRule } from "../history-limit.js";
import { exportTree, importReadOnly, parseImport } from "../ndjson.js";
import { parentOf, parseDirKey } from "../path.js";
import { createPlanner } from "../plan.js";
import type { EventRecord } from "../record.js";
import { checkValueSize } from "../rules.js";
import type { ExportEntry, ImportResult, ListOptions, Tree, WatchBatch, WriteResult } from "../types.js";
import { fixRevs, PENDING, type WriteStore } from "../write-store.js";
import { Attempt, Conflict } from "./attempt.js";
import type { EtcdAuth } from "./auth.js";
import type { EtcdCalls } from "./calls.js";
import {
  connectEtcd,
  type EtcdClientOptions,
  headerRev,
  isCompactedError,
  isEtcdFailure,
  isEtcdRefusal,
  kvNum,
  MemberSkipped,
  treeErrorOf,
} from "./client.js";
import { type Committed, createGroupCommit } from "./group-commit.js";
import type { EtcdTls } from "./h2.js";
import { type EtcdRecord, nodeSk } from "./layout.js";
import { createEtcdLeases } from "./leases.js";
import { createLibraryCalls } from "./library-calls.js";
import { startLocalReads } from "./local-reads.js";
import { createEtcdReads } from "./reads.js";
import { EtcdRpc } from "./rpc.js";
import { upgradeEtcdLayout } from "./upgrade.js";
import { watchTree } from "./watch.js";

export interface EtcdTreeOptions {
  /** `host:port` of each etcd member. */
  endpoints: string[];
  /** Key prefix of this tree in etcd (default `byteseek/`); trees with different prefixes are separate. */
  prefix?: string;
  /** Previous versions kept per value for history(): see TreeOptions.historyLimit. */
  historyLimit?: HistoryLimit;
  /**
   * Revisions kept for watch resume; default 10000. The tree compacts etcd (for every prefix on
   * it: etcd's compaction is cluster-wide) to keep about this many.
   */
  retainRevisions?: number;
  /** Largest value accepted, in bytes; default 1 MiB. */
  maxValueBytes?: number;
  logger?: Logger;
  /** A client to share (not closed by close()); by default the tree opens its own. */
  client?: Etcd3;
  /** Deadline of each etcd call in ms (default 5000). */
  callTimeoutMs?: number;
  /** TLS material (tls.ts reads it from files): every member is then reached over TLS. */
  tls?: EtcdTls;
  /** The largest answer accepted from etcd, in bytes (default 64 MiB): a larger one fails its call. */
  maxAnswerBytes?: number;
  /** Keepalive pings while calls wait on a member (default every 10 s, each given 5 s to be answered). */
  keepaliveMs?: number;
  keepaliveTimeoutMs?: number;
  /** The etcd user to log in as, when etcd has auth enabled (BYTESEEK_ETCD_USER/PASSWORD; auth.ts). */
  auth?: EtcdAuth;
  /** How long an operation keeps retrying while etcd is unreachable before TREE_UNAVAILABLE (default 5000). */
  unavailableAfterMs?: number;
  /** Most operations etcd accepts in one transaction (its --max-txn-ops; default 128). */
  maxTxnOps?: number;
  /**
   * Memory for the nodes this server read, kept current by etcd's watch and answered without a
   * round trip when current (local-reads.ts); default 32 MiB, 0 sends every read to etcd.
   */
  cacheBytes?: number;
  /**
   * The etcd fast lane (tree/fast-lanes.ts): transactions, ranges and watch streams in wire.ts's
   * protobuf on connections of its own (rpc.ts); false: through etcd3's public KV and Watch clients
   * (library-calls.ts, the reference lane). Default: BYTESEEK_FAST (on).
   */
  fast?: boolean;
}

/** Values larger than this are not copied into a write's events; a watcher reads them at their revision. */
const INLINE_LOG_VALUE = 64 * 1024;
const CONFLICT_GIVE_UP_MS = 30_000;

class TooManyOps extends TreeError {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens the tree on etcd; fails with TREE_UNAVAILABLE when etcd cannot be reached. */
export async function createEtcdTree(options: EtcdTreeOptions): Promise<Tree> {
  const prefix = options.prefix ?? "byteseek/";
  if (prefix === "") throw new TreeError("TREE_UNAVAILABLE", "the etcd prefix must not be empty");
  const versionsKept = historyRule(options.historyLimit);
  const retain = Math.max(1, options.retainRevisions ?? 10_000);
  const compactStep = Math.max(1, Math.floor(retain / 10));
  const maxValueBytes = options.maxValueBytes ?? 1024 * 1024;
  const maxTxnOps = options.maxTxnOps ?? 128;
  const unavailableAfterMs = options.unavailableAfterMs ?? 5000;
  const logger = options.logger;
  const {
    client: shared,
    callTimeoutMs,
    tls,
    maxAnswerBytes,
    keepaliveMs,
    keepaliveTimeoutMs,
    auth,
  } = options;
  const clientOptions: EtcdClientOptions = {
    endpoints: options.endpoints,
    ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }),
    ...(tls === undefined ? {} : { tls }),
    ...(maxAnswerBytes === undefined ? {} : { maxAnswerBytes }),
    ...(keepaliveMs === undefined ? {} : { keepaliveMs }),
    ...(keepaliveTimeoutMs === undefined ? {} : { keepaliveTimeoutMs }),
    ...(auth === undefined ? {} : { auth }),
  };
  const client = shared ?? connectEtcd(clientOptions);
  const plan = createPlanner({ history: versionsKept, maxValueBytes });
  const fast = options.fast ?? fastLanesByDefault();
  const rpc: EtcdCalls = fast ? new EtcdRpc(clientOptions) : createLibraryCalls(client);
  const group = createGroupCommit({ rpc, maxTxnOps });
  const closers = new Set<() => void>();
  const enc = (sk: string) => Buffer.from(prefix + sk, "utf8");
  const leases = createEtcdLeases(client, prefix, logger);
  let closed = false;
  let lastRev = 0;
  let compacted = 1;
  let compacting: Promise<void> | undefined;
  /** The first revision a watch can replay (after an upgrade from the format with a log key). */
  let firstRev = 0;
  const lanes = new Map<string, { tail: Promise<void>; holders: number }>();
  // A write's id only needs to be unique among the writes to this etcd: this tree's random part
  // and a count. Drawing random bytes for each write cost more than building its transaction.
  const idBase = randomBytes(8).toString("hex");
  let writeCount = 0;

  const seeRev = (rev: number) => {
    if (rev > lastRev) lastRev = rev;
  };

  function ensureOpen(): void {
    if (closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
  }

  /**
   * Lanes: writes of this process that conflict, on a directory (its child count or append
   * sequence) or anywhere, go through that directory's lane one at a time; while a lane is busy,
   * new writes to the same directory queue in it at once rather than attempting and conflicting.
   */
  async function takeLane(key: string): Promise<() => void> {
    let entry = lanes.get(key);
    if (!entry) {
      entry = { tail: Promise.resolve(), holders: 0 };
      lanes.set(key, entry);
    }
    const lane = entry;
    lane.holders++;
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const before = lane.tail;
    lane.tail = before.then(() => mine);
    await before;
    return () => {
      release();
      if (--lane.holders === 0) lanes.delete(key);
    };
  }

  /** Reads, retried while etcd is away, then TREE_UNAVAILABLE. */
  async function read<T>(what: string, fn: () => Promise<T>): Promise<T> {
    ensureOpen();
    const started = Date.now();
    // A member skipped says less than the failure that made it skipped (a refused certificate…).
    let reason: unknown;
    for (let i = 0; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (!isEtcdFailure(err)) throw err;
        if (!(err instanceof MemberSkipped) || reason === undefined) reason = err;
        if (isEtcdRefusal(err) || Date.now() - started >= unavailableAfterMs) throw treeErrorOf(reason, what);
        ensureOpen();
        await sleep(Math.min(10 * 2 ** i, 500));
      }
    }
  }

  /**
   * Finds whether one of the commits whose answer was lost was applied: its marker record (the
   * first node it put) carries its id, so the marker key's versions since the attempt read are
   * looked through, newest first.
   */
  async function findCommit(
    pending: Array<{ id: string; fromRev: number; marker: string }>,
    upTo: number,
  ): Promise<{ id: string; rev: number } | undefined> {
    for (const p of pending) {
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

  /**
   * Runs one write: attempts from fresh reads until a commit's compares hold. A commit whose
   * answer was lost (etcd went away) is looked up by its id before anything is retried or
   * refused, so no write is applied twice or reported as failed when it was done. Appends to one
   * directory queue in this process (they all change its sequence); other writes retry a
   * conflict after a short random wait, and queue by directory only if they keep conflicting.
   */
  async function write<T>(
    planned: (s: WriteStore) => T | Promise<T>,
    laneKey: string,
    queueFirst = false,
  ): Promise<T> {
    const run = (m: Attempt) => m.plan(planned);
    ensureOpen();
    const base = `${idBase}${(++writeCount).toString(36)}`;
    const started = Date.now();
    const pending: Array<{ id: string; fromRev: number; marker: string; value: T }> = [];
    let release = queueFirst ? await takeLane(laneKey) : undefined;
    let outage = 0;
    let conflicts = 0;
    const resolvePending = async (m: Attempt): Promise<T | undefined> => {
      if (pending.length === 0 || m.readRev === 0) return undefined;
      const hit = await findCommit(pending, m.readRev);
      if (!hit) return undefined;
      return fixRevs(pending.find((p) => p.id === hit.id)!.value, hit.rev);
    };
    try {
      for (let attempt = 0; ; attempt++) {
        ensureOpen();
        // After a conflict, read etcd: what the record cache held may be what conflicted.
        const m = new Attempt(rpc, prefix, seeRev, conflicts === 0 ? local : undefined, maxTxnOps);
        const id = `${base}.${attempt}`;
        let value: T;
        let outcome: "conflict" | "unavailable";
        let failure: unknown;
        try {
          value = await run(m);
          const found = await resolvePending(m);
          if (found !== undefined) return found;
          if (!m.writes) {
            if (m.fromCache.size === 0) return fixRevs(value, m.readRev || lastRev);
            // Nothing to commit, so no compare checks the cached records the answer rests on
            // (a mkindex of a directory another server just removed): answer from etcd instead.
            conflicts++;
            continue;
          }
          const txn = m.build(id, maxTxnOps, inlineOrLazy);
          if (txn.success.length > maxTxnOps)
            throw new TooManyOps(
              "TREE_TXN_INVALID",
              `this write needs ${txn.success.length} etcd operations, over etcd's limit of ${maxTxnOps}; split it into smaller transactions`,
              { etcdOps: txn.success.length, limit: maxTxnOps },
            );
          let res: Committed;
          try {
            res = await group.commit(txn);
          } catch (err) {
            if (isEtcdRefusal(err)) throw treeErrorOf(err, "commit");
            pending.push({ id, fromRev: m.readRev + 1, marker: txn.marker, value });
            throw err;
          }
          const rev = res.rev;
          seeRev(rev);
          if (res.succeeded) {
            remember(m, rev);
            await compactIfDue(rev);
            return fixRevs(value, rev);
          }
          local.dropRecords(m.fromCache);
          outcome = "conflict";
        } catch (err) {
          if (err instanceof Conflict) outcome = "conflict";
          else if (err instanceof TreeError && m.fromCache.size > 0 && !(err instanceof TooManyOps)) {
            // A refusal (version mismatch, exists, read-only…) judged on cached records: they may
            // be a watch delay old, so judge again on what etcd holds before answering it.
            outcome = "conflict";
          } else if (err instanceof TreeError) {
            // A refusal read after a lost answer may be caused by that very commit.
            const found = await resolvePending(m).catch(() => undefined);
            if (found !== undefined) return found;
            throw err;
          } else if (!isEtcdFailure(err)) throw err;
          else {
            outcome = "unavailable";
            failure = err;
          }
        }
        if (outcome === "unavailable") {
          if (Date.now() - started >= unavailableAfterMs) throw treeErrorOf(failure, "write");
          await sleep(Math.min(10 * 2 ** outage++, 500));
          continue;
        }
        if (Date.now() - started >= CONFLICT_GIVE_UP_MS)
          throw new TreeError(
            "TREE_UNAVAILABLE",
            "too much contention: the write kept conflicting; retry later",
          );
        conflicts++;
        if (!release && conflicts >= 3) release = await takeLane(laneKey);
        else await sleep(Math.random() * Math.min(2 ** conflicts, 8));
      }
    } finally {
      release?.();
    }
  }

  /** Keeps what a commit wrote in the record cache, so this server's next write of it reads nothing. */
  function remember(m: Attempt, rev: number): void {
    const { puts, dels, ranges } = m.written();
    if (ranges) local.dropRecords();
    else local.dropRecords(dels);
    for (const p of puts) local.noteRecord(p.sk, { raw: p.raw, cr: p.cr === PENDING ? rev : p.cr, mr: rev });
  }

  function inlineOrLazy(ev: EventRecord & { lz?: 1 }): EventRecord & { lz?: 1 } {
    if (ev.v === undefined) return ev;
    const size = typeof ev.v === "string" ? ev.v.length : JSON.stringify(ev.v).length;
    if (size <= INLINE_LOG_VALUE) return ev;
    const { v: _big, ...rest } = ev;
    return { ...rest, lz: 1 };
  }

  /** Compacts etcd when `retain` more revisions went by; the writes of one batch share one call. */
  function compactIfDue(rev: number): Promise<void> | undefined {
    const target = rev - retain + 1;
    if (target - compacted < compactStep) return undefined;
    compacting ??= (async () => {
      try {
        await client.kv.compact({ revision: target });
      } catch (err) {
        // Another process compacted further already: fine. Anything else waits for the next write.
        if (!isCompactedError(err)) {
          logger?.warn({ err }, "etcd compaction failed");
          return;
        }
      }
      if (target > compacted) compacted = target;
    })().finally(() => {
      compacting = undefined;
    });
    return compacting;
  }

  const local = startLocalReads({
    client,
    rpc,
    prefix,
    cacheBytes: options.cacheBytes ?? 32 * 1024 * 1024,
    known: () => lastRev,
    ...(logger ? { logger } : {}),
  });
  const { getNode, list, history, valueAt } = createEtcdReads({
    client,
    prefix,
    local,
    read,
    seeRev,
    ensureOpen,
  });

  /** Exports `dir` as it was at one revision, whatever is written meanwhile. */
  async function* exportSnapshot(dir: string): AsyncGenerator<ExportEntry> {
    parseDirKey(dir);
    const head = await read("export", () => client.kv.range({ key: enc(nodeSk(dir)) }));
    const rev = headerRev(head.header);
    const pinned = {
      ...tree,
      get: (k: string) => getNode(k, rev),
      list: (d: string, o?: ListOptions) => list(d, o, rev),
      history: (k: string) => history(k, rev),
    };
    yield* exportTree(pinned, dir);
  }

  /** Imports in as few transactions as etcd's limits allow, halving a chunk that is too big. */
  async function importChunk(
    items: Awaited<ReturnType<typeof parseImport>>,
    force: boolean,
  ): Promise<WriteResult> {
    try {
      return await write((m) => {
        plan.importItems(m, items, force);
        return { key: "/", rev: PENDING, version: 0 };
      }, "");
    } catch (err) {
      if (!(err instanceof TooManyOps) || items.length === 1) throw err;
      const half = Math.ceil(items.length / 2);
      await importChunk(items.slice(0, half), force);
      return importChunk(items.slice(half), force);
    }
  }

  async function* beforeUpgrade(fromRev: number): AsyncGenerator<WatchBatch> {
    const current = await read("watch", async () => {
      seeRev(headerRev((await client.kv.range({ key: enc(nodeSk("/")), keys_only: true })).header));
      return lastRev;
    });
    throw new TreeError(
      "TREE_COMPACTED",
      `revision ${fromRev} is before this tree's upgrade at ${firstRev}; re-list, then watch from revision ${current + 1}`,
      { compactRev: firstRev, currentRev: current, relistFrom: current + 1 },
    );
  }

  const tree: Tree = {
    get: (key, o) => getNode(key, undefined, o?.consistency === "linearizable"),
    set: (key, value, o) => write((m) => plan.set(m, key, value, o), laneOf(key)),
    del: (key, o) => write((m) => plan.del(m, key, o), laneOf(key)),
    deltree: (dir, o) => write((m) => plan.deltree(m, dir, o), laneOf(dir)),
    mkindex: (dir) => write((m) => plan.mkindex(m, dir), laneOf(dir)),
    list,
    append: (dir, value, o) => write((m) => plan.append(m, dir, value, o), dir, true),
    txn: (req) => write((m) => plan.txn(m, req), ""),
    watch: (prefixKey, o) =>
      o?.fromRev !== undefined && o.fromRev < firstRev
        ? beforeUpgrade(o.fromRev)
        : watchTree(
            {
              rpc,
              prefix,
              feed: local,
              ...(logger ? { logger } : {}),
              closers,
              isClosed: () => closed,
              known: () => lastRev,
              onRev: seeRev,
              onCompacted: (rev) => {
                if (rev > compacted) compacted = rev;
              },
              valueAt,
            },
            prefixKey,
            o,
          ),
    history: (key) => history(key),
    export: (dir = "/") => exportSnapshot(dir),
    async import(entries, io = {}): Promise<ImportResult> {
      ensureOpen();
      const parsed = await parseImport(entries, (v) => checkValueSize(v, maxValueBytes));
      // The chunks commit one by one: read-only keys are looked for before the first.
      if (!io.force)
        for (const e of parsed) if (!e.dir && (await getNode(e.key))?.ro) throw importReadOnly(e);
      let rev = lastRev;
      for (let i = 0; i < parsed.length; i += 64)
        rev = (await importChunk(parsed.slice(i, i + 64), io.force === true)).rev;
      return { imported: parsed.length, rev };
    },
    clear: () => write((m) => plan.clear(m), ""),
    revision: () => lastRev,
    // Other servers write this etcd too: ask it (one small read) before trusting lastRev.
    syncRevision: () =>
      read("revision", async () => {
        const res = await client.kv.range({ key: enc(nodeSk("/")), keys_only: true });
        seeRev(headerRev(res.header));
        return lastRev;
      }),
    compactedRev: () => compacted,
    leases,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      leases.stop();
      local.close();
      for (const stop of closers) stop();
      rpc.close();
      if (!options.client) client.close();
    },
  };

  // Upgrade an older layout, and learn the current revision (and that etcd answers), before
  // handing the tree out.
  try {
    firstRev = await read("open", () => upgradeEtcdLayout(client, prefix, logger));
    if (firstRev > compacted) compacted = firstRev;
    await read("open", async () =>
      seeRev(headerRev((await client.kv.range({ key: enc(nodeSk("/")) })).header)),
    );
  } catch (err) {
    local.close();
    rpc.close();
    if (!options.client) client.close();
    throw treeErrorOf(err, `open ${options.endpoints.join(",")}`);
  }
  return tree;
}

/** The lane of a write to `key`: its directory's (whose count it may change). */
function laneOf(key: string): string {
  return typeof key === "string" ? (parentOf(key) ?? "/") : "";
}
