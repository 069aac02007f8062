/**
 * The call pipeline: resolve → validate → gate (hooks, policy, a person's approval) → execute →
 * after-hooks → record. `call` never throws: every outcome is a result, and every call is recorded.
 *
 * Each stage is a function of its own: `catalogue.resolve`, `validateArgs` (validate-args.ts),
 * `gateCall` (gate-stage.ts), `runCall` (run-call.ts: the started record, then the tool),
 * `runAfterHooks` (run-hooks.ts) and `recordDone` (call-records.ts); `answer` runs them in order
 * until one answers, and `call` wraps it: the run id checked, a throw turned into a result, the
 * text capped, the record written, the call's processes cleaned up.
 */

import { performance } from "node:perf_hooks";
import type { Approvals } from "../gate/approvals.js";
import type { OwnedScope } from "../process/scope.js";
import { createCallLog } from "../records/usage.js";
import { isRunId, RUN_ID_RULE } from "../run-id.js";
import type { ToolResult } from "../types.js";
import { recordDone } from "./call-records.js";
import { capText } from "./cap.js";
import { gateCall } from "./gate-stage.js";
import type { ToolCall } from "./hooks.js";
import type { CallOptions, CallPipeline, PipelineOptions, RecordMeta } from "./pipeline-types.js";
import { failure } from "./results.js";
import { type RunContext, runCall } from "./run-call.js";
import { runAfterHooks } from "./run-hooks.js";
import { createSampleTally } from "./sample-tally.js";
import { validateArgs } from "./validate-args.js";

export function createCallPipeline(options: PipelineOptions): CallPipeline {
  const { logger, hooks, catalogue, readPolicy, approvals } = options;
  const callLog = createCallLog(options.tree, logger);

  /** Everything up to the record, stage by stage; `meta` is what the record says ran and why. */
  async function answer(
    name: string,
    args: unknown,
    callOptions: CallOptions,
    meta: RecordMeta,
    context: RunContext,
  ): Promise<ToolResult> {
    const resolved = await catalogue.resolve(name);
    if (resolved.decl) meta.decl = resolved.decl;
    if (!resolved.ok) return resolved.result;
    const { declaration: decl, key } = resolved;
    const valid = validateArgs(name, args, decl.params);
    if ("refusal" in valid) return valid.refusal;

    const call: ToolCall = {
      name,
      args: valid.args,
      vid: callOptions.vid,
      key,
      declaration: decl,
      agentWritten: resolved.agentWritten,
      approved: callOptions.approve === true,
      signal: callOptions.signal ?? new AbortController().signal,
    };
    const loaded = await readPolicy();
    const result = !loaded.ok
      ? invalidPolicy(loaded.problems)
      : ((await gateCall({ deps: options, call, resolved, policy: loaded.policy, callOptions, meta })) ??
        (await runCall(
          options,
          call,
          { sequential: decl.sequential, ref: resolved.decl },
          loaded.policy,
          callOptions,
          meta,
          context,
        )));
    return runAfterHooks(hooks, logger, call, result);
  }

  async function call(name: string, args: unknown, callOptions: CallOptions): Promise<ToolResult> {
    const ts = Date.now();
    const started = performance.now();
    const vid = callOptions?.vid;
    if (!isRunId(vid))
      return failure(
        "arg",
        "invalid_args",
        `the run id (vid) ${JSON.stringify(vid)} is not valid: ${RUN_ID_RULE}`,
        {},
      );
    let result: ToolResult;
    const meta: RecordMeta = { args: args ?? {} };
    const scopes: OwnedScope[] = [];
    // what an upstream's sampling spent of the run's model: counted with the call (even one that
    // fails), or on its own when it finishes after the call's record is written
    const tally = createSampleTally((late) => {
      logger.info({ vid, tool: name, ...late }, "a sample ended after its call was recorded");
      callLog.lateSamples(vid, late).catch((err: unknown) => {
        logger.error(
          { err, vid, tool: name, ...late },
          "cannot count a late sample's tokens in the run's usage",
        );
      });
    });
    try {
      // an upstream's question during the call goes to a person only where one waits or the caller's
      // host can ask one (never to `approve: true`, which approves the call, not an answer nobody gave)
      const { askHost } = callOptions;
      const person =
        callOptions.waitForApproval || askHost
          ? { onApproval: callOptions.onApproval, ...(askHost ? { host: askHost } : {}) }
          : undefined;
      const heard = callOptions.onProgress ? { onProgress: callOptions.onProgress } : {};
      result = await answer(String(name), args, approvedByCaller(approvals, callOptions), meta, {
        scopes,
        listeners: { person, ...heard, onSample: tally.add },
      });
    } catch (err) {
      logger.error({ err, tool: name, vid }, "tool call failed inside the runtime");
      result = failure(
        "runtime",
        "failed",
        `${name} failed inside byteseek: ${(err as Error)?.message ?? String(err)}. Try again, or use another tool.`,
        {},
      );
    }
    result = capped(result);
    const ms = Math.round((performance.now() - started) * 1000) / 1000;
    const sampled = tally.take();
    const record = await recordDone(
      { callLog, failpoint: options.failpoint },
      { name: String(name), vid, ts, ms, result, ...(sampled ? { sampled } : {}) },
      callOptions,
      meta,
    );
    // the record is written: what the call's processes left (output, temp files, stragglers) goes
    await Promise.all(
      scopes.map((s) =>
        s.dispose().catch((err: unknown) => logger.warn({ err, vid }, "cannot clean up after a call")),
      ),
    );
    return record === undefined ? result : { ...result, record };
  }

  /** A call answers once its record and counters are stored (one write): nothing is left to wait for. */
  async function flush(): Promise<void> {}

  return { call, flush };
}

/** No call runs while the policy does not validate. */
function invalidPolicy(problems: string[]): ToolResult {
  return failure(
    "denied",
    "denied",
    `No tool can run: the policy at /byteseek/policy is invalid (${problems.join("; ")}). Tell the user.`,
    { problems },
  );
}

/** The result with its text capped (details say so when it was). */
function capped(result: ToolResult): ToolResult {
  const c = capText(result.text);
  return c.truncated
    ? { ...result, text: c.text, details: { ...result.details, textTruncated: true } }
    : result;
}

/** The reason an entry a caller approved with its own call records (nobody waited on it). */
export const APPROVED_WITH_CALL = "approved with the call itself (approve: true)";

/**
 * `approve: true` from a caller that names itself: whatever the call needs approved (the gate's
 * confirmation, a change to what a person wrote) is asked as for a waiting caller, and decided at
 * once by that caller, so the entry records who and through which credential.
 */
function approvedByCaller(approvals: Approvals, o: CallOptions): CallOptions {
  if (o.approve !== true || o.approvedBy === undefined) return o;
  const { approvedBy, approvedVia, approve: _flag, onApproval: _asker, ...rest } = o;
  return {
    ...rest,
    waitForApproval: true,
    onApproval(pending) {
      if (pending.elicitation) return;
      approvals
        .decide(
          pending.key,
          { decision: "approve", scope: "once", reason: APPROVED_WITH_CALL },
          approvedBy,
          approvedVia,
        )
        .catch(() => {
          // decided elsewhere meanwhile: that decision stands, and the call follows it
        });
    },
  };
}
