/**
 * The call pipeline: resolve → validate → gate (hooks, policy, a person's approval) → execute →
 * after-hooks → record. `call` never throws: every outcome is a result, and every call is recorded.
 */

import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { Tree } from "../../tree/types.js";
import { acceptedHash } from "../catalogue/agent-tools.js";
import type { Catalogue, DeclRef } from "../catalogue/catalogue.js";
import { compileParams } from "../catalogue/declaration.js";
import { argProblems, signatureOf } from "../catalogue/json-schema.js";
import { approvalOf, changeApproval, type PendingApproval, rerunApproval } from "../gate/approval-flow.js";
import type { Approvals, ProposedChange } from "../gate/approvals.js";
import { checkPolicy, type GateInput } from "../gate/gate.js";
import type { LoadedPolicy, Policy } from "../gate/policy.js";
import type { Power } from "../gate/powers.js";
import type { OwnedScope } from "../process/scope.js";
import {
  type CallOrigin,
  idempotencyKeyOf,
  STARTED_TEXT,
  type ToolRecord,
  writeRecord,
} from "../records/records.js";
import { createCallLog, UNKNOWN_TOOLS } from "../records/usage.js";
import { isRunId, RUN_ID_RULE } from "../run-id.js";
import type { KeyedLock, ToolProgress, ToolResult } from "../types.js";
import { capText } from "./cap.js";
import { effectOf } from "./effect.js";
import type { Execute } from "./execute.js";
import type { HookVerdict, ToolCall, ToolHooks } from "./hooks.js";
import type { CallIntent } from "./intent.js";
import type { PlanIntent } from "./intent-plan.js";
import { failure } from "./results.js";

export interface CallOptions {
  /** The run making the call: its records go to /byteseek/tool/<vid>/. */
  vid: string;
  /** Aborting it stops the call (kind runtime, code aborted). */
  signal?: AbortSignal;
  /** The user approved this call (a person calling a tool directly: `--approve`, `approve: true`). */
  approve?: boolean;
  /**
   * Who gave `approve: true` (`person (http)`, `person (cli)`) and the credential they came with
   * (`bearer token sha256:…`, `command line`): then an approval the call needs is kept in the tree
   * like every other — an entry decided at once, `once`, by them, via that credential — so the
   * audit shows the door. Without it, `approve` only lets the call through (in-process callers).
   */
  approvedBy?: string;
  approvedVia?: string;
  /**
   * A person may be asked (the agent loop): a call that needs confirmation, or a change to what a
   * person wrote, writes an approval entry and waits for the decision (policy.approvalTimeoutMs).
   * Without it such a call answers `denied` (needs_approval) at once.
   */
  waitForApproval?: boolean;
  /** Told when the call starts waiting for a person, with the approval key. */
  onApproval?: (pending: PendingApproval) => void;
  /** Told of the call's progress while it runs (an upstream MCP server's progress and log lines, bounded). */
  onProgress?: (progress: ToolProgress) => void;
  /** The model's tool call this answers (the agent loop): kept in the record for a resumed run. */
  origin?: CallOrigin;
  /**
   * A resumed run running an interrupted call again (agent/resume.ts): the key of its `started`
   * record, which this call's records replace, keeping its idempotency key.
   */
  retry?: string;
  /**
   * A resumed run's interrupted call of unknown outcome, under the policy's `resumeUnknown: "ask"`:
   * it runs again only once a person approves (an approval entry; `waitForApproval` is implied),
   * else it answers `outcome_unknown` without running. `decided` is told what the person said.
   * A caller's own `approve: true` (without `approvedBy`) is that approval.
   */
  askRerun?: { decided?: (approved: boolean, approval: string) => void };
}

/**
 * Fault injection for the chaos test and bench (BYTESEEK_KILL_AT): told at the two points a
 * process may die during a call — `effect` (its started record written, the tool not yet run)
 * and `record` (the tool ran, its result not yet recorded).
 */
export type Failpoint = (point: "effect" | "record", call: { name: string; vid: string }) => void;

export interface PipelineOptions {
  tree: Tree;
  logger: Logger;
  hooks: readonly ToolHooks[];
  catalogue: Catalogue;
  readPolicy: () => Promise<LoadedPolicy>;
  execute: Execute;
  approvals: Approvals;
  workspace: string;
  hidden: readonly string[];
  powersOf: (ref: string) => readonly Power[];
  runLocks: KeyedLock;
  /** What an `mcp` tool's server needs (GateInput.mcpNeeds), from the MCP client. */
  mcpNeeds?: GateInput["mcpNeeds"] | undefined;
  /** Whether an `mcp` tool's upstream tool may be called (GateInput.mcpAllowed), from the MCP client. */
  mcpAllowed?: GateInput["mcpAllowed"] | undefined;
  /** What a call intends (side effect, file hashes), asked just before its started record. */
  planIntent: PlanIntent;
  failpoint?: Failpoint | undefined;
}

export interface CallPipeline {
  call(name: string, args: unknown, options: CallOptions): Promise<ToolResult>;
  /** Waits until the usage counters of every call answered so far are stored. */
  flush(): Promise<void>;
}

/** Filled while a call is answered, written with its record. */
interface RecordMeta {
  /** The arguments as the caller sent them. */
  args: unknown;
  decl?: DeclRef;
  gate?: { rule: string };
  approval?: string;
  /** The call's started record (the call executed): its key, and what it intended. */
  started?: { key: string; intent: CallIntent };
}

export function createCallPipeline(options: PipelineOptions): CallPipeline {
  const { tree, logger, hooks, catalogue, readPolicy, execute, approvals, workspace, hidden, powersOf } =
    options;
  const callLog = createCallLog(tree, logger);

  async function gate(
    call: ToolCall,
    policy: Policy,
    inherited: { inheritedConfirm?: string; wraps?: string; decl?: { writer: string } },
    declHash: string,
    runHooks = true,
  ): Promise<{ result?: ToolResult; rule: string }> {
    for (const hook of runHooks ? hooks : []) {
      if (!hook.before) continue;
      // biome-ignore lint/suspicious/noConfusingVoidType: what a before-hook may answer.
      let verdict: HookVerdict | undefined | void;
      try {
        verdict = await hook.before(call);
      } catch (err) {
        logger.warn({ err, tool: call.name, vid: call.vid }, "a before-hook failed; denying the call");
        return {
          rule: "hook",
          result: failure(
            "denied",
            "denied",
            `${call.name} was refused: a check before the call failed (${(err as Error).message})`,
            {},
          ),
        };
      }
      if (verdict?.deny)
        return {
          rule: "hook",
          result: failure("denied", "denied", `${call.name} was refused: ${verdict.deny}`, {
            reason: verdict.deny,
          }),
        };
    }
    const verdict = await checkPolicy({
      name: call.name,
      declaration: call.declaration,
      args: call.args,
      vid: call.vid,
      agentWritten: call.agentWritten,
      approved: call.approved,
      policy,
      workspace,
      hidden,
      builtinPowers: powersOf,
      declHash,
      ...(inherited.decl && inherited.decl.writer !== "person"
        ? { declOwner: inherited.decl.writer, agentAccepted: (n: string) => acceptedHash(tree, n) }
        : {}),
      ...(inherited.inheritedConfirm ? { inheritedConfirm: inherited.inheritedConfirm } : {}),
      ...(inherited.wraps ? { wraps: inherited.wraps } : {}),
      ...(options.mcpNeeds ? { mcpNeeds: options.mcpNeeds } : {}),
      ...(options.mcpAllowed ? { mcpAllowed: options.mcpAllowed } : {}),
    });
    if (verdict.allowed) return { rule: verdict.rule };
    return {
      rule: verdict.rule,
      result: failure("denied", verdict.code, verdict.reason, {
        reason: verdict.reason,
        rule: verdict.rule,
        ...(verdict.power ? { power: verdict.power } : {}),
      }),
    };
  }

  async function afterHooks(call: ToolCall, result: ToolResult): Promise<ToolResult> {
    let current = result;
    for (const hook of hooks) {
      if (!hook.after) continue;
      try {
        const next = await hook.after(call, current);
        if (next) {
          const kind = next.kind ?? current.kind;
          current = {
            ...current,
            ...next,
            kind,
            isError: kind !== "ok",
            details: next.details ?? current.details,
          };
        }
      } catch (err) {
        logger.warn({ err, tool: call.name, vid: call.vid }, "an after-hook failed; result kept");
      }
    }
    return current;
  }

  /** The arguments as an object the declaration's schema accepts, or the result refusing them. */
  function validateArgs(
    name: string,
    args: unknown,
    params: Record<string, unknown>,
  ): { args: Record<string, unknown> } | { refusal: ToolResult } {
    const signature = signatureOf(name, params);
    if (args === undefined || args === null) args = {};
    if (typeof args !== "object" || Array.isArray(args))
      return {
        refusal: failure(
          "arg",
          "invalid_args",
          `${name} takes an object of named arguments. Signature: ${signature}`,
          { signature },
        ),
      };
    const validated = structuredClone(args) as Record<string, unknown>;
    const validate = compileParams(params);
    if (validate(validated)) return { args: validated };
    const problems = argProblems(validate.errors, validated);
    const lines = problems.map(
      (p) =>
        `- ${p.field === "/" ? "the arguments" : p.field.slice(1).replaceAll("/", ".")}: expected ${p.expected}${p.got ? `, got ${p.got}` : ""}`,
    );
    return {
      refusal: failure(
        "arg",
        "invalid_args",
        `Invalid arguments for ${name}:\n${lines.join("\n")}\nSignature: ${signature}\nFix the arguments and call again.`,
        { problems, signature },
      ),
    };
  }

  /**
   * Intent before effect: the `started` record (arguments, declaration pin, gate rule, idempotency
   * key, side effect, file hashes) is stored before the call executes. A call whose start cannot
   * be recorded does not run (answered as a refusal).
   */
  async function begin(
    call: ToolCall,
    policy: Policy,
    callOptions: CallOptions,
    meta: RecordMeta,
  ): Promise<ToolResult | undefined> {
    const intent = await options.planIntent(call, policy);
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
    };
    // a retry keeps its key; a new record's is its own number, known once appended (stored with the result)
    if (callOptions.retry !== undefined) record.idempotencyKey = idempotencyKeyOf(callOptions.retry);
    const key = await writeRecord(tree, logger, call.vid, record, callOptions.retry);
    if (key === undefined)
      return failure(
        "runtime",
        "failed",
        `${call.name} did not run: byteseek could not record its start in the tree (see the server's log). Try again later.`,
        {},
      );
    call.idempotencyKey = idempotencyKeyOf(key);
    meta.started = { key, intent };
    return undefined;
  }

  /** Everything up to the record; `meta` is what the record says ran and why. */
  async function answer(
    name: string,
    args: unknown,
    callOptions: CallOptions,
    meta: RecordMeta,
    scopes: OwnedScope[],
    listeners: Parameters<Execute>[4],
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
    let result: ToolResult | undefined;
    if (!loaded.ok)
      result = failure(
        "denied",
        "denied",
        `No tool can run: the policy at /byteseek/policy is invalid (${loaded.problems.join("; ")}). Tell the user.`,
        { problems: loaded.problems },
      );
    else {
      let gated = await gate(call, loaded.policy, resolved, resolved.decl.hash);
      const needsPerson = gated.result?.details.code === "needs_approval";
      if (callOptions.askRerun && !call.approved && (!gated.result || needsPerson)) {
        // one question covers both: running it again, and the confirmation the tool may need
        const asked = await rerunApproval(
          approvals,
          call,
          gated.rule,
          resolved.decl,
          loaded.policy,
          callOptions,
        );
        meta.approval = asked.key;
        callOptions.askRerun.decided?.(asked.approved, asked.key);
        if (asked.approved) {
          call.approved = true;
          if (needsPerson) gated = await gate(call, loaded.policy, resolved, resolved.decl.hash, false);
          gated.rule = `${gated.rule}; ${asked.rule}`;
        } else gated = { rule: gated.rule, result: asked.refusal };
      } else if (needsPerson && callOptions.waitForApproval) {
        const asked = await approvalOf(
          approvals,
          tree,
          call,
          gated.rule,
          resolved.decl,
          loaded.policy,
          callOptions,
        );
        if (asked.key) meta.approval = asked.key;
        if (asked.approved) {
          call.approved = true;
          gated = await gate(call, loaded.policy, resolved, resolved.decl.hash, false);
          gated.rule = `${gated.rule}; ${asked.rule}`;
        } else gated = { rule: gated.rule, result: asked.refusal };
      }
      meta.gate = { rule: gated.rule };
      result = gated.result;
      // a caller that asks the person itself (an MCP host) shows what would run
      if (result?.details.code === "needs_approval")
        result = {
          ...result,
          details: {
            ...result.details,
            effect: effectOf(decl, call.args),
            owner: resolved.decl.writer === "person" ? "person" : `run ${resolved.decl.writer}`,
            hash: resolved.decl.hash,
          },
        };
    }
    if (!result && loaded.ok) {
      const policy = loaded.policy;
      const run = async (): Promise<ToolResult> => {
        const refused = await begin(call, policy, callOptions, meta);
        if (refused) return refused;
        options.failpoint?.("effect", call);
        return execute(call, policy, callOptions.signal, scopes, listeners);
      };
      result = decl.sequential ? await options.runLocks.run(callOptions.vid, run) : await run();
      const change = result.details.change as ProposedChange | undefined;
      if (result.details.code === "needs_approval" && change && callOptions.waitForApproval)
        result = await changeApproval(
          approvals,
          tree,
          call,
          change,
          resolved.decl,
          policy,
          callOptions,
          meta,
        );
    }
    return afterHooks(call, result as ToolResult);
  }

  /**
   * `approve: true` from a caller that names itself: whatever the call needs approved (the gate's
   * confirmation, a change to what a person wrote) is asked as for a waiting caller, and decided at
   * once by that caller, so the entry records who and through which credential.
   */
  function approvedByCaller(o: CallOptions): CallOptions {
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
            { decision: "approve", scope: "once", reason: "approved with the call itself (approve: true)" },
            approvedBy,
            approvedVia,
          )
          .catch(() => {
            // decided elsewhere meanwhile: that decision stands, and the call follows it
          });
      },
    };
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
    try {
      // an upstream's question during the call goes to a person only where one waits (never to
      // `approve: true`, which approves the call, not an answer nobody gave)
      const person = callOptions.waitForApproval ? { onApproval: callOptions.onApproval } : undefined;
      const heard = callOptions.onProgress ? { onProgress: callOptions.onProgress } : {};
      result = await answer(String(name), args, approvedByCaller(callOptions), meta, scopes, {
        person,
        ...heard,
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
    const capped = capText(result.text);
    if (capped.truncated)
      result = { ...result, text: capped.text, details: { ...result.details, textTruncated: true } };
    const ms = Math.round((performance.now() - started) * 1000) / 1000;
    // made-up names share one counter: a run calling many cannot grow its usage node without bound
    const tool = result.details.code === "unknown_tool" ? UNKNOWN_TOOLS : String(name);
    const begun = meta.started;
    if (begun) options.failpoint?.("record", { name: String(name), vid });
    const record = await callLog.write(
      vid,
      {
        ...baseRecord(String(name), meta.args, ts, meta, callOptions),
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
      { tool, kind: result.kind, ms },
      // a retry refused before it ran still settles the started record it retries
      begun?.key ?? callOptions.retry,
    );
    // the record is written: what the call's processes left (output, temp files, stragglers) goes
    await Promise.all(
      scopes.map((s) =>
        s.dispose().catch((err: unknown) => logger.warn({ err, vid }, "cannot clean up after a call")),
      ),
    );
    return record === undefined ? result : { ...result, record };
  }

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

  /** A call answers once its record and counters are stored (one write): nothing is left to wait for. */
  async function flush(): Promise<void> {}

  return { call, flush };
}
