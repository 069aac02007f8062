import type { ToolDeclaration } from "../catalogue/declaration.js";
import type { ToolResult } from "../types.js";

/** A call as the hooks see it, after its declaration resolved and its arguments validated. */
export interface ToolCall {
  name: string;
  /** The arguments as validated (schema defaults filled in). Do not mutate. */
  args: Record<string, unknown>;
  vid: string;
  /** The tree key of the declaration. */
  key: string;
  declaration: ToolDeclaration;
  /** True when the declaration node is owned by a run (written through `tree.set`). */
  agentWritten: boolean;
  /** Whether the caller approved this call (confirmation). */
  approved: boolean;
  signal: AbortSignal;
  /** `<vid>/<n>` of the call's record, once its `started` record is written (just before it executes). */
  idempotencyKey?: string;
}

/** What a before-hook answers to refuse a call; nothing (or no `deny`) lets it go on. */
export interface HookVerdict {
  deny?: string;
}

/**
 * Hooks around every call, run in the order given.
 *
 * `before` runs after the arguments validated and before the policy: it may refuse the call by
 * answering `{deny: reason}` (the call becomes kind `denied` with that reason, the tool does not
 * run, and the call is still recorded). It must not change the arguments or write to the tree
 * records. A `before` that throws denies the call (fail closed).
 *
 * `after` runs for every call whose arguments validated — once the tool finished (or failed,
 * timed out, or was denied by a hook or the policy) — and before the record is written: it may
 * return a replacement result (its `text` is what the model sees and what is recorded) or
 * nothing to keep the result. An `after` that throws leaves the
 * result as it was (the failure is logged). Neither hook may throw past the boundary: the runtime
 * catches both.
 */
export interface ToolHooks {
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook written as plain statements returns void.
  before?(call: ToolCall): Promise<HookVerdict | undefined | void> | HookVerdict | undefined | void;
  after?(
    call: ToolCall,
    result: ToolResult,
  ): Promise<Partial<ToolResult> | undefined> | Partial<ToolResult> | undefined;
}
