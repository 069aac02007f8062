/**
 * The etcd tree's write loop. A write is planned (tree/plan.ts) on an Attempt, which reads from
 * etcd (or this server's record cache) and builds one etcd transaction guarded by compares on
 * everything it read; the transaction goes through the group commit. A commit whose compares
 * failed is a conflict: the write is planned again from fresh reads. A commit whose answer was
 * lost (etcd went away) is looked up by its id before anything is retried or refused, so no write
 * is applied twice or reported as failed when it was done. Appends to one directory queue in this
 * process (they all change its sequence); other writes retry a conflict after a short random
 * wait, and queue by directory only if they keep conflicting.
 *
 * Per write: `write` → `attemptOnce` (→ `commitAttempt`, or `judgeFailure` when it throws) →
 * `afterConflict` / the backoff of an outage, over one `WriteRun`.
 */
import { randomBytes } from "node:crypto";
import type { Etcd3 } from "etcd3";
import { TreeError } from "../errors.js";
import type { EventRecord } from "../record.js";
import { fixRevs, PENDING, type WriteStore } from "../write-store.js";
import { Attempt, type BuiltTxn, Conflict } from "./attempt.js";
import type { EtcdCalls } from "./calls.js";
import { isEtcdFailure, isEtcdRefusal, treeErrorOf } from "./client.js";
import type { CompactIfDue } from "./compaction.js";
import type { Committed } from "./group-commit.js";
import type { TakeLane } from "./lanes.js";
import type { LocalReads } from "./local-reads.js";
import { findCommit, type LostCommit } from "./lost-commits.js";
import { backoffMs, sleep } from "./retry.js";
import type { EtcdTreeState } from "./tree-state.js";

/** Values larger than this are not copied into a write's events; a watcher reads them at their revision. */
const INLINE_LOG_VALUE = 64 * 1024;
const CONFLICT_GIVE_UP_MS = 30_000;

/** A write that needs more etcd operations than one transaction may hold (import splits on it). */
export class TooManyOps extends TreeError {}

export interface WriteLoopDeps {
  state: EtcdTreeState;
  client: Etcd3;
  rpc: EtcdCalls;
  group: { commit(txn: BuiltTxn): Promise<Committed> };
  local: LocalReads;
  takeLane: TakeLane;
  compactIfDue: CompactIfDue;
  maxTxnOps: number;
  unavailableAfterMs: number;
}

/**
 * Runs one write planned by `planned`, in lane `laneKey` (taken before the first attempt when
 * `queueFirst`), and answers its result with the revision it committed at.
 */
export type Write = <T>(
  planned: (s: WriteStore) => T | Promise<T>,
  laneKey: string,
  queueFirst?: boolean,
) => Promise<T>;

/** One write's state across its attempts. */
interface WriteRun<T> {
  planned: (s: WriteStore) => T | Promise<T>;
  laneKey: string;
  /** The write's id; attempt n commits as `<base>.<n>`. */
  base: string;
  started: number;
  /** Commits sent whose answer was lost, with the value each would answer. */
  lost: Array<LostCommit & { value: T }>;
  release: (() => void) | undefined;
  outages: number;
  conflicts: number;
}

/** What one attempt came to. */
type Outcome<T> =
  | { answer: T }
  /** Its compares failed, or what it judged from cached records may be stale. */
  | { retry: "conflict" }
  /** It wrote nothing but read cached records no compare will check: read etcd instead, at once. */
  | { retry: "fresh" }
  | { retry: "unavailable"; failure: unknown };

export function createWriteLoop(deps: WriteLoopDeps): Write {
  const { state } = deps;
  // A write's id only needs to be unique among the writes to this etcd: this tree's random part
  // and a count. Drawing random bytes for each write cost more than building its transaction.
  const idBase = randomBytes(8).toString("hex");
  let writeCount = 0;

  return async function write<T>(
    planned: (s: WriteStore) => T | Promise<T>,
    laneKey: string,
    queueFirst = false,
  ): Promise<T> {
    state.ensureOpen();
    const run: WriteRun<T> = {
      planned,
      laneKey,
      base: `${idBase}${(++writeCount).toString(36)}`,
      started: Date.now(),
      lost: [],
      release: queueFirst ? await deps.takeLane(laneKey) : undefined,
      outages: 0,
      conflicts: 0,
    };
    try {
      for (let attempt = 0; ; attempt++) {
        state.ensureOpen();
        // After a conflict, read etcd: what the record cache held may be what conflicted.
        const records = run.conflicts === 0 ? deps.local : undefined;
        const m = new Attempt(deps.rpc, state.prefix, state.seeRev, records, deps.maxTxnOps);
        const outcome = await attemptOnce(deps, run, m, `${run.base}.${attempt}`);
        if ("answer" in outcome) return outcome.answer;
        if (outcome.retry === "fresh") run.conflicts++;
        else if (outcome.retry === "unavailable") {
          if (Date.now() - run.started >= deps.unavailableAfterMs)
            throw treeErrorOf(outcome.failure, "write");
          await sleep(backoffMs(run.outages++));
        } else await afterConflict(deps, run);
      }
    } finally {
      run.release?.();
    }
  };
}

/** One attempt: plan, commit, and what came of it; it throws only what answers the write. */
async function attemptOnce<T>(
  deps: WriteLoopDeps,
  run: WriteRun<T>,
  m: Attempt,
  id: string,
): Promise<Outcome<T>> {
  try {
    return await commitAttempt(deps, run, m, id);
  } catch (err) {
    return judgeFailure(deps, run, m, err);
  }
}

/** Plans the write on `m` and commits it as `id`, unless a lost commit of this write already landed. */
async function commitAttempt<T>(
  deps: WriteLoopDeps,
  run: WriteRun<T>,
  m: Attempt,
  id: string,
): Promise<Outcome<T>> {
  const value = await m.plan(run.planned);
  const found = await resolveLost(deps, run, m);
  if (found !== undefined) return { answer: found };
  if (!m.writes) {
    if (m.fromCache.size === 0) return { answer: fixRevs(value, m.readRev || deps.state.lastRev) };
    // Nothing to commit, so no compare checks the cached records the answer rests on
    // (a mkindex of a directory another server just removed): answer from etcd instead.
    return { retry: "fresh" };
  }
  const txn = m.build(id, deps.maxTxnOps, inlineOrLazy);
  if (txn.success.length > deps.maxTxnOps)
    throw new TooManyOps(
      "TREE_TXN_INVALID",
      `this write needs ${txn.success.length} etcd operations, over etcd's limit of ${deps.maxTxnOps}; split it into smaller transactions`,
      { etcdOps: txn.success.length, limit: deps.maxTxnOps },
    );
  let res: Committed;
  try {
    res = await deps.group.commit(txn);
  } catch (err) {
    if (isEtcdRefusal(err)) throw treeErrorOf(err, "commit");
    run.lost.push({ id, fromRev: m.readRev + 1, marker: txn.marker, value });
    throw err;
  }
  deps.state.seeRev(res.rev);
  if (res.succeeded) {
    remember(deps.local, m, res.rev);
    await deps.compactIfDue(res.rev);
    return { answer: fixRevs(value, res.rev) };
  }
  deps.local.dropRecords(m.fromCache);
  return { retry: "conflict" };
}

/** What an attempt that threw comes to: a retry, or (thrown again) the write's answer. */
async function judgeFailure<T>(
  deps: WriteLoopDeps,
  run: WriteRun<T>,
  m: Attempt,
  err: unknown,
): Promise<Outcome<T>> {
  if (err instanceof Conflict) return { retry: "conflict" };
  if (err instanceof TreeError && m.fromCache.size > 0 && !(err instanceof TooManyOps)) {
    // A refusal (version mismatch, exists, read-only…) judged on cached records: they may
    // be a watch delay old, so judge again on what etcd holds before answering it.
    return { retry: "conflict" };
  }
  if (err instanceof TreeError) {
    // A refusal read after a lost answer may be caused by that very commit.
    const found = await resolveLost(deps, run, m).catch(() => undefined);
    if (found !== undefined) return { answer: found };
    throw err;
  }
  if (!isEtcdFailure(err)) throw err;
  return { retry: "unavailable", failure: err };
}

/** After a conflict: give up past CONFLICT_GIVE_UP_MS, else queue in the lane (from the third) or wait a little. */
async function afterConflict<T>(deps: WriteLoopDeps, run: WriteRun<T>): Promise<void> {
  if (Date.now() - run.started >= CONFLICT_GIVE_UP_MS)
    throw new TreeError("TREE_UNAVAILABLE", "too much contention: the write kept conflicting; retry later");
  run.conflicts++;
  if (!run.release && run.conflicts >= 3) run.release = await deps.takeLane(run.laneKey);
  else await sleep(Math.random() * Math.min(2 ** run.conflicts, 8));
}

/** The answer of a lost commit of this write that landed, as far as `m` has read; else undefined. */
async function resolveLost<T>(deps: WriteLoopDeps, run: WriteRun<T>, m: Attempt): Promise<T | undefined> {
  if (run.lost.length === 0 || m.readRev === 0) return undefined;
  const hit = await findCommit(deps.client, deps.state.enc, run.lost, m.readRev);
  if (!hit) return undefined;
  return fixRevs(run.lost.find((p) => p.id === hit.id)!.value, hit.rev);
}

/** Keeps what a commit wrote in the record cache, so this server's next write of it reads nothing. */
function remember(local: LocalReads, m: Attempt, rev: number): void {
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
