/**
 * The pipeline's execute stage: the call's started record, then the tool (one at a time per run
 * when the declaration is `sequential`); a tool that proposes a change to what a person wrote
 * waits for that person's approval when the caller waits.
 */
import type { DeclRef } from "../catalogue/catalogue.js";
import { changeApproval } from "../gate/approval-flow.js";
import type { ProposedChange } from "../gate/approvals.js";
import type { Policy } from "../gate/policy.js";
import type { OwnedScope } from "../process/scope.js";
import type { ToolResult } from "../types.js";
import { recordStart } from "./call-records.js";
import type { Execute } from "./execute.js";
import type { ToolCall } from "./hooks.js";
import type { CallOptions, PipelineOptions, RecordMeta } from "./pipeline-types.js";

/** What the execute stage reads of the pipeline's dependencies. */
export type RunDeps = Pick<
  PipelineOptions,
  "tree" | "logger" | "planIntent" | "execute" | "runLocks" | "approvals" | "failpoint"
>;

/** Where the call's processes are kept (disposed once recorded), and who hears of it while it runs. */
export interface RunContext {
  scopes: OwnedScope[];
  listeners: Parameters<Execute>[4];
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
    const refused = await recordStart(deps, call, policy, callOptions, meta);
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
