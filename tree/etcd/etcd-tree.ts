/**
 * The tree on etcd v3: the same `Tree` contract as the LevelDB tree, shared by any number of
 * byteseek processes. Every write is one etcd transaction guarded by compares on everything it
 * read (attempt.ts), retried on conflict (write-loop.ts); the global revision is etcd's. The
 * rules of every write are tree/plan.ts's, its reads are reads.ts's, export and import bulk.ts's,
 * run leases leases.ts's, the watch watch.ts's. This file opens the parts in order and hands out
 * the tree: settings → connections → shared state → reads → writes → the tree → open.
 */
import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import { TreeError } from "../errors.js";
import { fastLanesByDefault } from "../fast-lanes.js";
import { type HistoryLimit, historyRule } from "../history-limit.js";
import { createPlanner, type Planner } from "../plan.js";
import type { Tree, WatchBatch } from "../types.js";
import type { EtcdAuth } from "./auth.js";
import { exportSnapshot, importEntries } from "./bulk.js";
import type { EtcdCalls } from "./calls.js";
import { connectEtcd, type EtcdClientOptions, headerRev, treeErrorOf } from "./client.js";
import { createCompaction } from "./compaction.js";
import { createGroupCommit } from "./group-commit.js";
import type { EtcdTls } from "./h2.js";
import { createLanes, laneOf } from "./lanes.js";
import { nodeSk } from "./layout.js";
import { createEtcdLeases } from "./leases.js";
import { createLibraryCalls } from "./library-calls.js";
import { type LocalReads, startLocalReads } from "./local-reads.js";
import { createEtcdReads } from "./reads.js";
import { createRetriedRead, type RetriedRead } from "./retry.js";
import { EtcdRpc } from "./rpc.js";
import { createTreeState, type EtcdTreeState } from "./tree-state.js";
import { upgradeEtcdLayout } from "./upgrade.js";
import { watchTree } from "./watch.js";
import { createWriteLoop, type Write } from "./write-loop.js";

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

/** The options with their defaults filled in. */
interface EtcdTreeSettings {
  prefix: string;
  retain: number;
  maxValueBytes: number;
  maxTxnOps: number;
  unavailableAfterMs: number;
  cacheBytes: number;
  fast: boolean;
  clientOptions: EtcdClientOptions;
}

/** Opens the tree on etcd; fails with TREE_UNAVAILABLE when etcd cannot be reached. */
export async function createEtcdTree(options: EtcdTreeOptions): Promise<Tree> {
  const settings = settingsOf(options);
  const { logger } = options;
  const conn = connect(options, settings);
  const state = createTreeState(settings.prefix);
  const read = createRetriedRead(state, settings.unavailableAfterMs);
  const local = startLocalReads({
    client: conn.client,
    rpc: conn.rpc,
    prefix: state.prefix,
    cacheBytes: settings.cacheBytes,
    known: () => state.lastRev,
    ...(logger ? { logger } : {}),
  });
  const reads = createEtcdReads({
    client: conn.client,
    prefix: state.prefix,
    local,
    read,
    seeRev: state.seeRev,
    ensureOpen: state.ensureOpen,
  });
  const write = createWriteLoop({
    state,
    client: conn.client,
    rpc: conn.rpc,
    group: createGroupCommit({ rpc: conn.rpc, maxTxnOps: settings.maxTxnOps }),
    local,
    takeLane: createLanes(),
    compactIfDue: createCompaction({ client: conn.client, state, retain: settings.retain, logger }),
    maxTxnOps: settings.maxTxnOps,
    unavailableAfterMs: settings.unavailableAfterMs,
  });
  const plan = createPlanner({
    history: historyRule(options.historyLimit),
    maxValueBytes: settings.maxValueBytes,
  });
  const tree = assemble({ options, settings, conn, state, read, local, reads, write, plan });
  try {
    await open(conn.client, state, read, logger);
  } catch (err) {
    local.close();
    conn.close();
    throw treeErrorOf(err, `open ${options.endpoints.join(",")}`);
  }
  return tree;
}

/** Fills in the defaults, and refuses an empty prefix. */
function settingsOf(options: EtcdTreeOptions): EtcdTreeSettings {
  const prefix = options.prefix ?? "byteseek/";
  if (prefix === "") throw new TreeError("TREE_UNAVAILABLE", "the etcd prefix must not be empty");
  const { callTimeoutMs, tls, maxAnswerBytes, keepaliveMs, keepaliveTimeoutMs, auth } = options;
  return {
    prefix,
    retain: Math.max(1, options.retainRevisions ?? 10_000),
    maxValueBytes: options.maxValueBytes ?? 1024 * 1024,
    maxTxnOps: options.maxTxnOps ?? 128,
    unavailableAfterMs: options.unavailableAfterMs ?? 5000,
    cacheBytes: options.cacheBytes ?? 32 * 1024 * 1024,
    fast: options.fast ?? fastLanesByDefault(),
    clientOptions: {
      endpoints: options.endpoints,
      ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }),
      ...(tls === undefined ? {} : { tls }),
      ...(maxAnswerBytes === undefined ? {} : { maxAnswerBytes }),
      ...(keepaliveMs === undefined ? {} : { keepaliveMs }),
      ...(keepaliveTimeoutMs === undefined ? {} : { keepaliveTimeoutMs }),
      ...(auth === undefined ? {} : { auth }),
    },
  };
}

/** The tree's connections to etcd: etcd3's client, and the lane its transactions, ranges and watch go by. */
interface Connections {
  client: Etcd3;
  rpc: EtcdCalls;
  /** Closes what the tree opened (a shared client stays open). */
  close(): void;
}

function connect(options: EtcdTreeOptions, settings: EtcdTreeSettings): Connections {
  const client = options.client ?? connectEtcd(settings.clientOptions);
  const rpc: EtcdCalls = settings.fast ? new EtcdRpc(settings.clientOptions) : createLibraryCalls(client);
  return {
    client,
    rpc,
    close() {
      rpc.close();
      if (!options.client) client.close();
    },
  };
}

/**
 * Upgrades an older layout, and learns the current revision (and that etcd answers), before the
 * tree is handed out.
 */
async function open(
  client: Etcd3,
  state: EtcdTreeState,
  read: RetriedRead,
  logger: Logger | undefined,
): Promise<void> {
  state.firstRev = await read("open", () => upgradeEtcdLayout(client, state.prefix, logger));
  state.seeCompacted(state.firstRev);
  await read("open", async () =>
    state.seeRev(headerRev((await client.kv.range({ key: state.enc(nodeSk("/")) })).header)),
  );
}

/** The `Tree` over the parts: each operation a plan written through the write loop, or a read. */
function assemble(p: {
  options: EtcdTreeOptions;
  settings: EtcdTreeSettings;
  conn: Connections;
  state: EtcdTreeState;
  read: RetriedRead;
  local: LocalReads;
  reads: ReturnType<typeof createEtcdReads>;
  write: Write;
  plan: Planner;
}): Tree {
  const { options, conn, state, read, local, reads, write, plan } = p;
  const { client } = conn;
  const leases = createEtcdLeases(client, state.prefix, options.logger);
  const closers = new Set<() => void>();
  /** Asks etcd its revision (one small read); `what` names it in TREE_UNAVAILABLE. */
  const askRevision = (what: string) =>
    read(what, async () => {
      const res = await client.kv.range({ key: state.enc(nodeSk("/")), keys_only: true });
      state.seeRev(headerRev(res.header));
      return state.lastRev;
    });
  const tree: Tree = {
    get: (key, o) => reads.getNode(key, undefined, o?.consistency === "linearizable"),
    set: (key, value, o) => write((m) => plan.set(m, key, value, o), laneOf(key)),
    del: (key, o) => write((m) => plan.del(m, key, o), laneOf(key)),
    deltree: (dir, o) => write((m) => plan.deltree(m, dir, o), laneOf(dir)),
    mkindex: (dir) => write((m) => plan.mkindex(m, dir), laneOf(dir)),
    list: reads.list,
    append: (dir, value, o) => write((m) => plan.append(m, dir, value, o), dir, true),
    txn: (req) => write((m) => plan.txn(m, req), ""),
    watch: (prefixKey, o) =>
      o?.fromRev !== undefined && o.fromRev < state.firstRev
        ? beforeUpgrade(state, () => askRevision("watch"), o.fromRev)
        : watchTree(
            {
              rpc: conn.rpc,
              prefix: state.prefix,
              feed: local,
              ...(options.logger ? { logger: options.logger } : {}),
              closers,
              isClosed: () => state.closed,
              known: () => state.lastRev,
              onRev: state.seeRev,
              onCompacted: state.seeCompacted,
              valueAt: reads.valueAt,
            },
            prefixKey,
            o,
          ),
    history: (key) => reads.history(key),
    export: (dir = "/") => exportSnapshot({ client, state, read, reads, tree }, dir),
    import: (entries, io = {}) =>
      importEntries(
        { state, write, plan, reads, maxValueBytes: p.settings.maxValueBytes },
        entries,
        io.force === true,
      ),
    clear: () => write((m) => plan.clear(m), ""),
    revision: () => state.lastRev,
    // Other servers write this etcd too: ask it before trusting lastRev.
    syncRevision: () => askRevision("revision"),
    compactedRev: () => state.compacted,
    leases,
    async close(): Promise<void> {
      if (state.closed) return;
      state.closed = true;
      leases.stop();
      local.close();
      for (const stop of closers) stop();
      conn.close();
    },
  };
  return tree;
}

/** A watch from before the upgrade from the log-key format: TREE_COMPACTED, saying where to resume. */
// biome-ignore lint/correctness/useYield: a watch that fails when first read, as every watch fails
async function* beforeUpgrade(
  state: EtcdTreeState,
  askRevision: () => Promise<number>,
  fromRev: number,
): AsyncGenerator<WatchBatch> {
  const current = await askRevision();
  throw new TreeError(
    "TREE_COMPACTED",
    `revision ${fromRev} is before this tree's upgrade at ${state.firstRev}; re-list, then watch from revision ${current + 1}`,
    { compactRev: state.firstRev, currentRev: current, relistFrom: current + 1 },
  );
}
