/**
 * The pipeline's gate stage: before-hooks and the policy (`checkCall`), then — where a person may
 * be asked — the approval (`askPerson`). It answers the result that refuses the call, or nothing
 * when the call may run, and notes in the record's meta the rule that decided and the approval.
 */
import { acceptedHash } from "../catalogue/agent-tools.js";
import type { Resolved } from "../catalogue/catalogue.js";
import { approvalOf, rerunApproval } from "../gate/approval-flow.js";
import { checkPolicy } from "../gate/gate.js";
import type { Policy } from "../gate/policy.js";
import type { ToolResult } from "../types.js";
import { effectOf } from "./effect.js";
import type { ToolCall } from "./hooks.js";
import type { CallOptions, PipelineOptions, RecordMeta } from "./pipeline-types.js";
import { failure } from "./results.js";
import { runBeforeHooks } from "./run-hooks.js";

/** What the gate stage reads of the pipeline's dependencies. */
export type GateDeps = Pick<
  PipelineOptions,
  "tree" | "logger" | "hooks" | "approvals" | "workspace" | "hidden" | "powersOf" | "mcpNeeds" | "mcpAllowed"
>;

/** A declaration the catalogue resolved for a call. */
export type ResolvedDecl = Extract<Resolved, { ok: true }>;

/** One call going through the gate stage: what each of its steps reads, and the record meta they note in. */
export interface GateStage {
  deps: GateDeps;
  call: ToolCall;
  resolved: ResolvedDecl;
  policy: Policy;
  callOptions: CallOptions;
  /** Where the deciding rule and the approval's key are noted for the call's record. */
  meta: RecordMeta;
}

/** What the hooks and the policy decided: the rule, and the result refusing the call (none: it may run). */
interface Gated {
  rule: string;
  result?: ToolResult;
}

/** The gate stage: the refusal of `call`, or undefined when it may run; `call.approved` is set when a person approved it. */
export async function gateCall(stage: GateStage): Promise<ToolResult | undefined> {
  const { call, resolved, meta } = stage;
  const gated = await askPerson(stage, await checkCall(stage));
  meta.gate = { rule: gated.rule };
  const result = gated.result;
  // a caller that asks the person itself (an MCP host) shows what would run
  if (result?.details.code === "needs_approval")
    return {
      ...result,
      details: {
        ...result.details,
        effect: effectOf(resolved.declaration, call.args),
        owner: resolved.decl.writer === "person" ? "person" : `run ${resolved.decl.writer}`,
        hash: resolved.decl.hash,
      },
    };
  return result;
}

/** Before-hooks (unless `runHooks` is false: a second check once a person approved), then the policy. */
async function checkCall(stage: GateStage, runHooks = true): Promise<Gated> {
  const { deps, call, resolved, policy } = stage;
  const refused = runHooks ? await runBeforeHooks(deps.hooks, deps.logger, call) : undefined;
  if (refused) return { rule: "hook", result: refused };
  const verdict = await checkPolicy({
    name: call.name,
    declaration: call.declaration,
    args: call.args,
    vid: call.vid,
    agentWritten: call.agentWritten,
    approved: call.approved,
    policy,
    workspace: deps.workspace,
    hidden: deps.hidden,
    builtinPowers: deps.powersOf,
    declHash: resolved.decl.hash,
    ...(resolved.decl.writer !== "person"
      ? { declOwner: resolved.decl.writer, agentAccepted: (n: string) => acceptedHash(deps.tree, n) }
      : {}),
    ...(resolved.inheritedConfirm ? { inheritedConfirm: resolved.inheritedConfirm } : {}),
    ...(resolved.wraps ? { wraps: resolved.wraps } : {}),
    ...(deps.mcpNeeds ? { mcpNeeds: deps.mcpNeeds } : {}),
    ...(deps.mcpAllowed ? { mcpAllowed: deps.mcpAllowed } : {}),
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

/**
 * Asks a person where the call needs one and one may be asked: a resumed call of unknown outcome
 * (`askRerun`: one question covers running it again and any confirmation), or a call needing
 * confirmation from a caller that waits. Approved, the policy is checked again as approved.
 */
async function askPerson(stage: GateStage, gated: Gated): Promise<Gated> {
  const { deps, call, resolved, policy, callOptions, meta } = stage;
  const needsPerson = gated.result?.details.code === "needs_approval";
  let asked: { approved: boolean; rule: string; key?: string; refusal?: ToolResult };
  if (callOptions.askRerun && !call.approved && (!gated.result || needsPerson)) {
    const rerun = await rerunApproval(deps.approvals, call, gated.rule, resolved.decl, policy, callOptions);
    meta.approval = rerun.key;
    callOptions.askRerun.decided?.(rerun.approved, rerun.key);
    asked = rerun;
  } else if (needsPerson && callOptions.waitForApproval)
    asked = await approvalOf(deps.approvals, deps.tree, call, gated.rule, resolved.decl, policy, callOptions);
  else return gated;
  if (asked.key) meta.approval = asked.key;
  if (!asked.approved) return { rule: gated.rule, result: asked.refusal! };
  call.approved = true;
  const again = needsPerson ? await checkCall(stage, false) : gated;
  return { ...again, rule: `${again.rule}; ${asked.rule}` };
}
