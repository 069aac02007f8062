import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";
import { type ValueKind, valueFromJson } from "../tree/value.js";
import type { ApprovalOutcome, ApprovalRequest, Approvals, ProposedChange } from "./approvals.js";

/** What a caller hears when a call starts waiting for a person. */
export interface PendingApproval {
  key: string;
  tool: string;
  args: unknown;
  reason: string;
  /** For a change to what a person wrote: its diff. */
  diff?: string;
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
    options.onApproval?.({
      key,
      tool: req.tool,
      args: req.args,
      reason: req.reason,
      ...(req.change ? { diff: req.change.diff } : {}),
    });
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
