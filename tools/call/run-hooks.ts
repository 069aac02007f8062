/** Running the hooks around a call (hooks.ts states what each may do): before-hooks fail closed, after-hooks fail open. */
import type { Logger } from "pino";
import type { ToolResult } from "../types.js";
import type { HookVerdict, ToolCall, ToolHooks } from "./hooks.js";
import { failure } from "./results.js";

/** The `denied` result of the first before-hook that refuses the call (or throws); undefined when all let it go on. */
export async function runBeforeHooks(
  hooks: readonly ToolHooks[],
  logger: Logger,
  call: ToolCall,
): Promise<ToolResult | undefined> {
  for (const hook of hooks) {
    if (!hook.before) continue;
    // biome-ignore lint/suspicious/noConfusingVoidType: what a before-hook may answer.
    let verdict: HookVerdict | undefined | void;
    try {
      verdict = await hook.before(call);
    } catch (err) {
      logger.warn({ err, tool: call.name, vid: call.vid }, "a before-hook failed; denying the call");
      return failure(
        "denied",
        "denied",
        `${call.name} was refused: a check before the call failed (${(err as Error).message})`,
        {},
      );
    }
    if (verdict?.deny)
      return failure("denied", "denied", `${call.name} was refused: ${verdict.deny}`, {
        reason: verdict.deny,
      });
  }
  return undefined;
}

/** The result as the after-hooks leave it: each may replace fields; one that throws is logged and skipped. */
export async function runAfterHooks(
  hooks: readonly ToolHooks[],
  logger: Logger,
  call: ToolCall,
  result: ToolResult,
): Promise<ToolResult> {
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
