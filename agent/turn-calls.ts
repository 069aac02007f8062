/**
 * Answering the tool calls of one assistant message: each call through the one call boundary (the
 * runtime records it, `started` before it runs and `done` after), or recorded here when it never
 * reaches the runtime (a truncated reply, unparsable arguments). Each result is told to the
 * listener at once and kept for the next commit of the run's state (agent/run-commit.ts).
 */
import { fillTemplate, readPrompt } from "../prompts/defaults.js";
import { SEARCH_TOOL } from "../prompts/tool-list.js";
import type { ToolKind } from "../tools/errors.js";
import { type CallOrigin, writeRecord } from "../tools/records/records.js";
import type { CallOptions } from "../tools/runtime.js";
import type { ToolResult } from "../tools/types.js";
import { str } from "../tree/value.js";
import type { ToolCall } from "./providers/types.js";
import { statusKey } from "./run-keys.js";
import { addUnsaved, type TurnDeps, type TurnState } from "./turn-state.js";

/** Rounds in a row in which every call failed before the run stops. */
export const REPAIR_ROUNDS = 3;

/** What a resume adds to a call it runs again (agent/resume-round.ts). */
export type RerunOptions = Pick<CallOptions, "retry" | "askRerun"> & { asked?: (approval: string) => void };

/** Records a call that never reached the runtime (truncated reply, unparsable arguments). */
export async function recordSynthetic(
  d: TurnDeps,
  vid: string,
  call: ToolCall,
  kind: ToolKind,
  code: string,
  text: string,
  origin: CallOrigin,
): Promise<ToolResult> {
  const details = { code, argsText: call.argsText.slice(0, 2000) };
  const record = await writeRecord(d.tree, d.logger, vid, {
    name: call.name,
    args: { "‥raw": call.argsText.slice(0, 2000) },
    kind,
    isError: true,
    text,
    details,
    ts: Date.now(),
    ms: 0,
    state: "done",
    origin,
  });
  return { kind, isError: true, text, details, ...(record ? { record } : {}) };
}

/** Runs one call through the runtime; while a person decides an approval, the run's status says it waits. */
export async function runCall(
  d: TurnDeps,
  s: TurnState,
  call: ToolCall,
  origin: CallOrigin,
  rerun?: RerunOptions,
): Promise<ToolResult> {
  const { vid, o, emit } = s;
  let args: unknown;
  try {
    args = call.argsText.trim() === "" ? {} : JSON.parse(call.argsText);
  } catch {
    const text = await readPrompt(d.tree, "bad-json");
    return recordSynthetic(d, vid, call, "vet", "invalid_json", text, origin);
  }
  let waited: Promise<unknown> | undefined;
  const result = await d.runtime.call(call.name, args, {
    vid,
    signal: s.signal,
    ...(o.approve ? { approve: true } : {}),
    ...(o.approve && o.approvedBy ? { approvedBy: o.approvedBy, approvedVia: o.approvedVia } : {}),
    waitForApproval: true,
    origin,
    ...(rerun?.retry ? { retry: rerun.retry } : {}),
    ...(rerun?.askRerun ? { askRerun: rerun.askRerun } : {}),
    onProgress: (p) => emit({ type: "tool_progress", id: call.id, name: call.name, ...p }),
    onApproval(p) {
      rerun?.asked?.(p.key);
      // the event goes out once the status says so: whoever hears it reads the same state
      waited = d.tree
        .set(statusKey(vid), str(`waiting ${p.key}`), { vid })
        .catch(() => undefined)
        .then(() => emit({ type: "approval_pending", id: call.id, name: call.name, ...p }));
    },
  });
  if (waited) {
    await waited;
    await d.tree.set(statusKey(vid), str("running"), { vid });
  }
  return result;
}

/** How a round went: calls that failed, and whether a tool ended the run. */
export interface Round {
  failed: number;
  terminate: boolean;
}

/**
 * Answers the calls of one assistant message in order; `answer` says how a call is answered. Each
 * result becomes a tool message the next commit stores.
 */
export async function answerCalls(
  s: TurnState,
  calls: readonly ToolCall[],
  answer: (call: ToolCall) => Promise<ToolResult>,
): Promise<Round> {
  const { emit, result } = s;
  let failed = 0;
  let terminate = false;
  for (const call of calls) {
    let args: unknown = call.argsText;
    try {
      args = JSON.parse(call.argsText);
    } catch {
      // shown raw
    }
    emit({ type: "tool_start", id: call.id, name: call.name, args });
    const r = await answer(call);
    if (r.isError) failed++;
    if (r.terminate) terminate = true;
    if (call.name === SEARCH_TOOL && !r.isError) for (const n of foundNames(r.details)) s.found.add(n);
    result.calls.push({
      name: call.name,
      kind: r.kind,
      isError: r.isError,
      ...(r.record ? { record: r.record } : {}),
    });
    if (r.record) result.records.push(r.record);
    emit({
      type: "tool_result",
      id: call.id,
      name: call.name,
      kind: r.kind,
      isError: r.isError,
      text: r.text,
      ...(r.record ? { record: r.record } : {}),
    });
    addUnsaved(s, {
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content: r.text,
      isError: r.isError,
    });
  }
  return { failed, terminate };
}

/** After a round of calls: whether the run ends (a tool ended it, or repair is exhausted). */
export async function afterRound(
  d: TurnDeps,
  s: TurnState,
  round: Round,
  calls: number,
  text: string,
): Promise<boolean> {
  s.failingRounds = round.failed === calls ? s.failingRounds + 1 : 0;
  if (round.terminate) {
    s.result.reason = "terminated";
    s.result.text = text;
    return true;
  }
  if (s.failingRounds >= REPAIR_ROUNDS) {
    s.result.reason = "repair_exhausted";
    s.result.text = fillTemplate(await readPrompt(d.tree, "repair-exhausted"), {
      rounds: String(REPAIR_ROUNDS),
      vid: s.vid,
    });
    return true;
  }
  return false;
}

/** The tool names a tools.search result answered (its details.names). */
function foundNames(details: Record<string, unknown>): string[] {
  const names = details.names;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : [];
}
