/**
 * The pipeline's execute stage: the call's started record, then the tool (one at a time per run
 * when the declaration is `sequential`); a tool that proposes a change to what a person wrote
 * waits for that person's approval when the caller waits.
 */
import { performance } from "node:perf_hooks";
import type { DeclRef } from "../catalogue/catalogue.js";
import { ToolError } from "../errors.js";
import { changeApproval } from "../gate/approval-flow.js";
import type { ProposedChange } from "../gate/approvals.js";
import type { Policy } from "../gate/policy.js";
import type { OwnedScope } from "../process/scope.js";
import { recordOp } from "../records/records.js";
import type { ToolResult } from "../types.js";
import { recordStart, startedAt, startRecord } from "./call-records.js";
import type { Execute } from "./execute.js";
import type { ToolCall } from "./hooks.js";
import { carryingRecord } from "./intent-write.js";
import type { CallOptions, PipelineOptions, RecordMeta } from "./pipeline-types.js";

/** What the execute stage reads of the pipeline's dependencies. */
export type RunDeps = Pick<
  PipelineOptions,
  | "tree"
  | "logger"
  | "planIntent"
  | "intentTiming"
  | "execute"
  | "runLocks"
  | "approvals"
  | "failpoint"
  | "onIntentWait"
>;

/** Where the call's processes are kept (disposed once recorded), and who hears of it while it runs. */
export interface RunContext {
  scopes: OwnedScope[];
  listeners: Parameters<Execute>[4];
}

/** A call in the execute stage, with what it runs on. */
interface Running {
  deps: RunDeps;
  call: ToolCall;
  policy: Policy;
  callOptions: CallOptions;
  meta: RecordMeta;
  context: RunContext;
}

export async function runCall(
  deps: RunDeps,
  call: ToolCall,
  decl: { sequential: boolean; ref: DeclRef },
  policy: Policy,
  callOptions: CallOptions,
  meta: RecordMeta,
  context: RunContext,
): Promise<ToolResult> {
  const run = async (): Promise<ToolResult> => {
    const running = { deps, call, policy, callOptions, meta, context };
    const timing = deps.intentTiming?.(call) ?? "before";
    if (timing === "meanwhile") return runWhileRecorded(running);
    if (timing === "in-write") return runWithRecordInItsWrite(running);
    const t = performance.now();
    const refused = await recordStart(deps, call, policy, callOptions, meta);
    deps.onIntentWait?.(performance.now() - t, call);
    if (refused) return refused;
    deps.failpoint?.("effect", call);
    return deps.execute(call, policy, callOptions.signal, context.scopes, context.listeners);
  };
  const result = decl.sequential ? await deps.runLocks.run(callOptions.vid, run) : await run();
  const change = result.details.change as ProposedChange | undefined;
  if (result.details.code === "needs_approval" && change && callOptions.waitForApproval)
    return changeApproval(deps.approvals, deps.tree, call, change, decl.ref, policy, callOptions, meta);
  return result;
}

/**
 * A tree write (side effect `tree`) commits its started record in its own write's transaction
 * (intent-write.ts): the record costs the call no commit of its own, a crash keeps both or neither,
 * and the record needs no plan of the keys (`withWrite`: it exists only if the write landed). A
 * write that cannot carry it stores it first, planned in full, as any other call does.
 */
async function runWithRecordInItsWrite(running: Running): Promise<ToolResult> {
  const { deps, call, policy, callOptions, meta, context } = running;
  const t = performance.now();
  const carried = startRecord(call, { sideEffect: "tree", withWrite: true }, callOptions, meta);
  deps.onIntentWait?.(performance.now() - t, call);
  const tree = carryingRecord(deps.tree, {
    op: (small) => recordOp(call.vid, carried.record, callOptions.retry, small),
    before: () => deps.failpoint?.("effect", call),
    landed: (key) => startedAt(call, meta, key, carried.intent),
    async alone() {
      const refused = await recordStart(deps, call, policy, callOptions, meta);
      if (refused) throw notStarted(refused);
    },
  });
  return deps.execute(call, policy, callOptions.signal, context.scopes, context.listeners, { tree });
}

/**
 * A tool that holds back its effect until told (BuiltinTool.awaitsIntent, a `shell` impl) runs
 * while its started record is stored: an edit writes and fsyncs its temp file, a command's sandbox
 * is set up, during the record's own fsync, and the rename or the exec waits for the record. The
 * record still comes before the effect on disk; the call's wall time no longer adds the two.
 */
async function runWhileRecorded(running: Running): Promise<ToolResult> {
  const { deps, call, policy, callOptions, meta, context } = running;
  const started = recordStart(deps, call, policy, callOptions, meta);
  const durable = started.then((refused) => {
    if (refused) throw notStarted(refused);
    deps.failpoint?.("effect", call);
  });
  // a tool that ends before it asks (its arguments refused by the file) leaves nobody waiting on it
  durable.catch(() => {});
  /** The first wait at the effect: what the record still cost the call once its preparation was done. */
  let waited: number | undefined;
  async function intentDurable(): Promise<void> {
    if (waited !== undefined) return durable;
    const t = performance.now();
    try {
      await durable;
    } finally {
      waited = performance.now() - t;
    }
  }
  let result: ToolResult;
  try {
    result = await deps.execute(call, policy, callOptions.signal, context.scopes, context.listeners, {
      durable: intentDurable,
    });
  } catch (err) {
    // the started record is settled before the pipeline records the failure at its key
    await started;
    throw err;
  }
  const t = performance.now();
  const refused = await started;
  deps.onIntentWait?.(waited ?? performance.now() - t, call);
  // the record's outcome stands over the tool's: a start that could not be recorded ran nothing
  return refused ?? result;
}

/** A start that could not be recorded, for a tool already running: its effect must not follow. */
function notStarted(refused: ToolResult): ToolError {
  return new ToolError("failed", refused.text, { kind: "runtime" });
}
