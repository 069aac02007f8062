import { createTwoFilesPatch } from "diff";
import { isTreeError } from "../../tree/errors.js";
import type { Tree } from "../../tree/types.js";
import { type ValueKind, valueFromJson } from "../../tree/value.js";
import type { PendingApproval } from "../call/call-notices.js";
import { effectOf } from "../call/effect.js";
import type { ToolCall } from "../call/hooks.js";
import { failure } from "../call/results.js";
import type { DeclRef } from "../catalogue/catalogue.js";
import { hashOf } from "../catalogue/hash.js";
import type { ToolResult } from "../types.js";
import { approvalReason } from "./approval-wording.js";
import {
  type ApprovalOutcome,
  type ApprovalRequest,
  type Approvals,
  type ProposedChange,
  parseStanding,
} from "./approvals.js";
import type { Policy } from "./policy.js";

/**
 * What a caller is told of the approval entry at `key` while the call waits for a person: the
 * wait tells it, and a replay tells it again from the entry (agent/replay/recorded-runtime.ts).
 */
export function pendingOf(key: string, req: ApprovalRequest): PendingApproval {
  return {
    key,
    tool: req.tool,
    args: req.args,
    reason: req.reason,
    ...(req.change
      ? { diff: req.change.diff, change: { key: req.change.key, action: req.change.action } }
      : {}),
    ...(req.effect ? { effect: req.effect } : {}),
    ...(req.owner ? { owner: req.owner } : {}),
    ...(req.decl ? { hash: req.decl.hash } : {}),
    ...(req.declDiff ? { declDiff: req.declDiff } : {}),
    ...(req.elicitation ? { elicitation: req.elicitation } : {}),
  };
}

/** What of a call's options the wait for a person uses. */
interface WaitOptions {
  signal?: AbortSignal;
  onApproval?: (pending: PendingApproval) => void;
}

/**
 * Writes the approval entry, tells the caller it waits, and waits for the decision (or the
 * timeout, which denies with "no answer").
 */
export async function askPerson(
  approvals: Approvals,
  req: ApprovalRequest,
  options: { signal?: AbortSignal; timeoutMs: number; onApproval?: (p: PendingApproval) => void },
): Promise<ApprovalOutcome> {
  const key = await approvals.requestApproval(req);
  try {
    options.onApproval?.(pendingOf(key, req));
  } catch {
    // a listener's failure never stops the wait
  }
  return approvals.awaitDecision(key, {
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

/**
 * Applies an approved change to what a person wrote, as the person's write (no owner): a later
 * change by an agent needs approval again. Answers text for the model, or throws the tree's error
 * when the key changed since the change was proposed (the approval was for another version).
 */
export async function applyChange(
  tree: Tree,
  change: ProposedChange,
): Promise<{ ok: boolean; text: string }> {
  try {
    if (change.action === "del") {
      await tree.del(change.key, { ifVersion: change.ifVersion });
      return { ok: true, text: `Deleted ${change.key}: a person approved the change.` };
    }
    const v = change.value as { kind: string; value: unknown };
    const res = await tree.set(change.key, valueFromJson(v.kind as ValueKind, v.value), {
      ifVersion: change.ifVersion,
    });
    return { ok: true, text: `Set ${change.key} (version ${res.version}): a person approved the change.` };
  } catch (err) {
    if (isTreeError(err, "TREE_VERSION_MISMATCH"))
      return {
        ok: false,
        text: `${change.key} changed while the approval was pending, so the approved change was not applied; tree.get it and propose the change again.`,
      };
    throw err;
  }
}

/** A call that needs confirmation: a standing grant for the run, or a person's decision. */
export async function approvalOf(
  approvals: Approvals,
  tree: Tree,
  call: ToolCall,
  rule: string,
  decl: DeclRef,
  policy: Policy,
  callOptions: WaitOptions,
): Promise<{ approved: boolean; rule: string; key?: string; refusal?: ToolResult }> {
  if (await approvals.approvedForRun(call.vid, call.name, decl.hash))
    return { approved: true, rule: `approved for run ${call.vid}` };
  const declDiff = await acceptedDiff(tree, call.name, decl, policy);
  const outcome = await askAboutCall(approvals, call, decl, policy, callOptions, {
    reason: approvalReason({ tool: call.name, vid: call.vid, ...(declDiff ? { declDiff } : {}) }, rule),
    rule,
    ...(declDiff ? { declDiff } : {}),
  });
  if (outcome.approved) return approvedAt(outcome);
  return {
    approved: false,
    key: outcome.key,
    rule,
    refusal: failure(
      "denied",
      "denied",
      `A person did not approve ${call.name} (${outcome.reason}); it did not run. Do not call it again unchanged: ask the user what to do instead.`,
      { approval: outcome.key, reason: outcome.reason, rule },
    ),
  };
}

/**
 * A resumed run's interrupted call whose outcome is unknown (policy `resumeUnknown: "ask"`): a person
 * decides whether it runs again. Asked every time (a standing grant for the tool covers running it,
 * not running an interrupted call twice). Not approved: the result tells the model the outcome is unknown.
 */
export async function rerunApproval(
  approvals: Approvals,
  call: ToolCall,
  rule: string,
  decl: DeclRef,
  policy: Policy,
  callOptions: WaitOptions,
): Promise<{ approved: boolean; rule: string; key: string; refusal?: ToolResult }> {
  const outcome = await askAboutCall(approvals, call, decl, policy, callOptions, {
    reason: approvalReason({ tool: call.name, vid: call.vid, interrupted: true }, rule),
    rule,
    interrupted: true,
  });
  if (outcome.approved) return approvedAt(outcome);
  return {
    approved: false,
    key: outcome.key,
    rule,
    refusal: {
      kind: "runtime",
      isError: true,
      text: `${call.name} was interrupted: the process running this run stopped during the call, so whether it took effect is unknown. A person was asked whether to run it again and did not approve (${outcome.reason}); it was not run again. Check what it would have changed before deciding to call it again.`,
      details: {
        code: "outcome_unknown",
        resumed: "declined",
        approval: outcome.key,
        reason: outcome.reason,
      },
    },
  };
}

/** A change to what a person wrote, proposed by a tool: applied only if a person approves it. */
export async function changeApproval(
  approvals: Approvals,
  tree: Tree,
  call: ToolCall,
  change: ProposedChange,
  decl: DeclRef,
  policy: Policy,
  callOptions: WaitOptions,
  meta: { approval?: string },
): Promise<ToolResult> {
  // the person reads why it waits, not the text the model would get if nobody could be asked
  const outcome = await askAboutCall(approvals, call, decl, policy, callOptions, {
    reason: approvalReason({ tool: call.name, vid: call.vid, change }, "person-written"),
    rule: "person-written",
    change,
  });
  meta.approval = outcome.key;
  if (!outcome.approved)
    return failure(
      "denied",
      "denied",
      `A person did not approve the change to ${change.key} (${outcome.reason}); nothing was changed. Ask the user before trying again.`,
      { approval: outcome.key, reason: outcome.reason, key: change.key },
    );
  const applied = await applyChange(tree, change);
  return applied.ok
    ? { kind: "ok", isError: false, text: applied.text, details: { key: change.key, approval: outcome.key } }
    : failure("runtime", "version_mismatch", applied.text, { key: change.key, approval: outcome.key });
}

/** Asks a person about this call of this declaration, waiting as long as the policy allows. */
function askAboutCall(
  approvals: Approvals,
  call: ToolCall,
  decl: DeclRef,
  policy: Policy,
  callOptions: WaitOptions,
  about: { reason: string; rule: string; change?: ProposedChange; declDiff?: string; interrupted?: true },
): ReturnType<typeof askPerson> {
  const request = {
    vid: call.vid,
    tool: call.name,
    args: call.args,
    decl: { key: decl.key, modRev: decl.modRev, hash: decl.hash },
    effect: effectOf(call.declaration, call.args),
    owner: decl.writer === "person" ? "person" : `run ${decl.writer}`,
  };
  return askPerson(
    approvals,
    { ...request, ...about },
    { timeoutMs: policy.approvalTimeoutMs, ...optionalWait(callOptions) },
  );
}

function optionalWait(options: WaitOptions): {
  signal?: AbortSignal;
  onApproval?: (p: PendingApproval) => void;
} {
  return {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onApproval ? { onApproval: options.onApproval } : {}),
  };
}

/**
 * When a person approved this tool for good with an earlier version of its declaration
 * (`<name>@sha256:<hash>` in policy.approved, not this hash): the diff from that version, found in
 * the declaration's kept history, to this one. Absent when nothing was approved or it is gone.
 */
async function acceptedDiff(
  tree: Tree,
  name: string,
  decl: DeclRef,
  policy: Policy,
): Promise<string | undefined> {
  const earlier = policy.approved
    .map(parseStanding)
    .filter((s) => s.tool === name && s.hash !== undefined && s.hash !== decl.hash)
    .map((s) => s.hash as string);
  if (earlier.length === 0) return undefined;
  let versions: Awaited<ReturnType<Tree["history"]>>;
  try {
    versions = await tree.history(decl.key);
  } catch {
    return undefined;
  }
  const now = await tree.get(decl.key);
  if (now?.kind !== "json") return undefined;
  for (const v of [...versions].reverse()) {
    if (v.deleted || v.value.kind !== "json" || !earlier.includes(hashOf(v.value.value))) continue;
    return createTwoFilesPatch(
      decl.key,
      decl.key,
      `${JSON.stringify(v.value.value, null, 2)}\n`,
      `${JSON.stringify(now.value.value, null, 2)}\n`,
      `approved for good (version ${v.version})`,
      `now (version ${now.version})`,
    );
  }
  return undefined;
}

/** What an approved question answers: the approval's key, and the rule that let the call run. */
function approvedAt(outcome: { key: string; scope?: string | undefined }): {
  approved: true;
  key: string;
  rule: string;
} {
  return { approved: true, key: outcome.key, rule: `approved at ${outcome.key} (${outcome.scope})` };
}
