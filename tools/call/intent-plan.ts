/**
 * The planner the call pipeline asks, after the gate allowed a call and before it executes, what
 * the call intends (tools/call/intent.ts): its side effect, an edit's file hashes from the built-in's
 * `intent`, a tree write's key versions and hashes from its `keyIntent`. A plan that cannot be made leaves the call `other` (never run twice).
 */
import type { Logger } from "pino";
import type { Tree } from "../../tree/types.js";
import { policyPaths } from "../gate/gate.js";
import type { Policy } from "../gate/policy.js";
import type { BuiltinTool } from "../types.js";
import type { ToolCall } from "./hooks.js";
import { type CallIntent, type SideEffect, sideEffectOf } from "./intent.js";

export type PlanIntent = (call: ToolCall, policy: Policy) => Promise<CallIntent>;

export function createIntentPlanner(options: {
  registry: ReadonlyMap<string, BuiltinTool>;
  workspace: string;
  logger: Logger;
  tree: Tree;
}): PlanIntent {
  const { registry, workspace, logger, tree } = options;
  return async function planIntent(call, policy) {
    const { builtin, sideEffect } = declaredSideEffect(call, registry);
    try {
      if (sideEffect === "files" && builtin?.intent) {
        const { roots } = await policyPaths(policy, workspace);
        const files = await builtin.intent(call.args, { workspace, roots, signal: call.signal });
        if (files === undefined) return { sideEffect: "other" };
        return files.length === 0 ? { sideEffect: "none", files } : { sideEffect, files };
      }
      if (sideEffect === "tree" && builtin?.keyIntent) {
        const keys = await builtin.keyIntent(call.args, { tree, vid: call.vid });
        if (keys === undefined) return { sideEffect: "other" };
        return keys.length === 0 ? { sideEffect: "none", keys } : { sideEffect, keys };
      }
      return { sideEffect };
    } catch (err) {
      logger.debug({ err, tool: call.name, vid: call.vid }, "cannot plan the call's changes");
      return { sideEffect: "other" };
    }
  };
}

/**
 * When a call's started record is stored, against its effect (tools/call/run-call.ts):
 * - `meanwhile`: the call runs while its record is stored, and its effect waits for it
 *   (ctx.intentDurable). A built-in that `awaitsIntent` (the edit family's renames, shell.run's
 *   commands), a `shell` impl (its only effect is its command, which the call's command scope
 *   starts once the record is stored), an `http` impl (it opens its connection meanwhile and sends
 *   its request once the record is stored, impl/http.ts), or a call that changes nothing (side
 *   effect `none`: no effect comes after the record, and one that dies unrecorded runs again
 *   harmlessly). The call still answers only once its record is stored.
 * - `in-write`: the record goes in the call's own tree write's transaction (intent-write.ts): a
 *   built-in of side effect `tree` (it plans `keyIntent`), whose effect is a write to the tree the
 *   record is written to. The record then needs no plan of the keys: it exists only if the write
 *   landed.
 * - `before`: stored before the call runs (mcp, llm, a built-in of unknown effect: their effect is
 *   their first act).
 */
export type IntentTiming = "meanwhile" | "in-write" | "before";

export function createIntentTiming(
  registry: ReadonlyMap<string, BuiltinTool>,
): (call: ToolCall) => IntentTiming {
  return function intentTiming(call) {
    const kind = call.declaration.impl.kind;
    if (kind === "shell" || kind === "http") return "meanwhile";
    const { builtin, sideEffect } = declaredSideEffect(call, registry);
    if (builtin?.awaitsIntent === true || sideEffect === "none") return "meanwhile";
    return sideEffect === "tree" ? "in-write" : "before";
  };
}

/** The call's built-in (when its impl names one) and the side effect its declaration states. */
function declaredSideEffect(
  call: ToolCall,
  registry: ReadonlyMap<string, BuiltinTool>,
): { builtin: BuiltinTool | undefined; sideEffect: SideEffect } {
  const impl = call.declaration.impl;
  const builtin = impl.kind === "builtin" ? registry.get(impl.ref) : undefined;
  const sideEffect = sideEffectOf(call.declaration, call.agentWritten, {
    files: builtin?.intent !== undefined,
    keys: builtin?.keyIntent !== undefined,
  });
  return { builtin, sideEffect };
}
