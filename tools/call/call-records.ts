/**
 * The pipeline's record stage, in two parts. Intent before effect: a call's `started` record
 * (arguments, declaration pin, gate rule, idempotency key, side effect, file hashes) is stored
 * before it executes (`recordStart`); its `done` record, with the result, replaces it after
 * (`recordDone`, with the run's usage counters in the same write).
 */
import type { Logger } from "pino";
import type { Tree } from "../../tree/types.js";
import type { Policy } from "../gate/policy.js";
import { idempotencyKeyOf, STARTED_TEXT, type ToolRecord, writeRecord } from "../records/records.js";
import { type createCallLog, UNKNOWN_TOOLS } from "../records/usage.js";
import type { ToolResult } from "../types.js";
import type { ToolCall } from "./hooks.js";
import { type CallIntent, intentNeedsSync } from "./intent.js";
import type { CallOptions, PipelineOptions, RecordMeta } from "./pipeline-types.js";
import { failure } from "./results.js";

/** The fields both of a call's records carry: what was called, by which declaration, allowed by what. */
function baseRecord(
  name: string,
  args: unknown,
  ts: number,
  meta: RecordMeta,
  callOptions: CallOptions,
): Pick<ToolRecord, "name" | "args" | "ts" | "decl" | "writer" | "gate" | "approval" | "origin"> {
  return {
    name,
    args,
    ts,
    ...(meta.decl
      ? {
          decl: { key: meta.decl.key, modRev: meta.decl.modRev, hash: meta.decl.hash },
          writer: meta.decl.writer,
        }
      : {}),
    ...(meta.gate ? { gate: meta.gate } : {}),
    ...(meta.approval ? { approval: meta.approval } : {}),
    ...(callOptions.origin ? { origin: callOptions.origin } : {}),
  };
}

/** A call's `started` record, planned: what it intends, and the record that says so. */
export interface PlannedStart {
  intent: CallIntent;
  record: ToolRecord;
}

/** The `started` record of a call that intends `intent`. */
export function startRecord(
  call: ToolCall,
  intent: CallIntent,
  callOptions: CallOptions,
  meta: RecordMeta,
): PlannedStart {
  const record: ToolRecord = {
    ...baseRecord(call.name, meta.args, Date.now(), meta, callOptions),
    kind: "runtime",
    isError: true,
    text: STARTED_TEXT,
    details: { code: "started" },
    ms: 0,
    state: "started",
    sideEffect: intent.sideEffect,
    ...(intent.files ? { files: intent.files } : {}),
    ...(intent.keys ? { keys: intent.keys } : {}),
    ...(intent.withWrite ? { withWrite: true as const } : {}),
  };
  // a retry keeps its key; a new record's is its own number, known once appended (stored with the result)
  if (callOptions.retry !== undefined) record.idempotencyKey = idempotencyKeyOf(callOptions.retry);
  return { intent, record };
}

/**
 * Plans (intent-plan.ts) and stores the `started` record of a call about to execute, and notes it
 * in `meta` (and the call's idempotency key); a call whose start cannot be recorded does not run:
 * answers the refusal.
 */
export async function recordStart(
  deps: { tree: Tree; logger: Logger; planIntent: PipelineOptions["planIntent"] },
  call: ToolCall,
  policy: Policy,
  callOptions: CallOptions,
  meta: RecordMeta,
): Promise<ToolResult | undefined> {
  const { intent, record } = startRecord(call, await deps.planIntent(call, policy), callOptions, meta);
  // at sync always, the record of a call that is safe to repeat waits for the next fsync (intent.ts)
  const deferSync = !intentNeedsSync(intent.sideEffect);
  const key = await writeRecord(deps.tree, deps.logger, call.vid, record, callOptions.retry, deferSync);
  if (key === undefined) return notRecorded(call.name);
  startedAt(call, meta, key, intent);
  return undefined;
}

/** Notes that the call's started record is stored at `key`: its idempotency key, and what the done record keeps of it. */
export function startedAt(call: ToolCall, meta: RecordMeta, key: string, intent: CallIntent): void {
  call.idempotencyKey = idempotencyKeyOf(key);
  meta.started = { key, intent };
}

/** A record that cannot be stored: the call did not run, and the model is told to try again later. */
function notRecorded(name: string): ToolResult {
  return failure(
    "runtime",
    "failed",
    `${name} did not run: byteseek could not record its start in the tree (see the server's log). Try again later.`,
    {},
  );
}

/** What the done record says of one call, beside what `meta` gathered. */
export interface Answered {
  name: string;
  vid: string;
  /** When the call came in (epoch ms), and how long it took to answer. */
  ts: number;
  ms: number;
  result: ToolResult;
  /** The samples of the run's model an upstream asked for during the call, and their tokens. */
  sampled?: { samples: number; input: number; output: number };
}

/** Stores the `done` record and the usage counters of an answered call; answers the record's key, if stored. */
export function recordDone(
  deps: { callLog: ReturnType<typeof createCallLog>; failpoint?: PipelineOptions["failpoint"] },
  answered: Answered,
  callOptions: CallOptions,
  meta: RecordMeta,
): Promise<string | undefined> {
  const { name, vid, ts, ms, result, sampled } = answered;
  // made-up names share one counter: a run calling many cannot grow its usage node without bound
  const tool = result.details.code === "unknown_tool" ? UNKNOWN_TOOLS : name;
  const begun = meta.started;
  if (begun) deps.failpoint?.("record", { name, vid });
  return deps.callLog.write(
    vid,
    {
      ...baseRecord(name, meta.args, ts, meta, callOptions),
      kind: result.kind,
      isError: result.isError,
      text: result.text,
      details: result.details,
      ms,
      state: "done",
      ...(begun
        ? {
            idempotencyKey: idempotencyKeyOf(begun.key),
            sideEffect: begun.intent.sideEffect,
            ...(begun.intent.files ? { files: begun.intent.files } : {}),
            ...(begun.intent.keys ? { keys: begun.intent.keys } : {}),
          }
        : {}),
      ...(result.terminate ? { terminate: true } : {}),
    },
    { tool, kind: result.kind, ms, ...(sampled ? { sampled } : {}) },
    // a retry refused before it ran still settles the started record it retries
    begun?.key ?? callOptions.retry,
  );
}
