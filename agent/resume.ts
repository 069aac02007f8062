/**
 * What a resumed run does with each call of its last assistant message that has no result in the
 * session (the process died before or during it), decided from the call's record:
 * - no record: it never started (its intent is written before any effect) → run it;
 * - `done`: the recorded result is fed back, nothing runs;
 * - `started`, side effect `none` (reads) → run again; `http` → sent again with the same
 *   idempotency key; `files` (edits) → at the intended hashes it is done, at the hashes before it
 *   runs once, otherwise `file_changed`; `tree` (tree.set/del) → done when the record was committed
 *   with the write (`withWrite`), else likewise from each key's version and value hash, otherwise
 *   `key_changed`;
 * - `started`, anything else (commands, the model, MCP) → as the policy's `resumeUnknown` says:
 *   `report` (the default): never run again, the model is told the outcome is unknown; `ask`: run
 *   again only if a person approves (an approval entry, as any other), else reported unknown.
 * A call that runs again goes through the whole boundary, so a tool that needs approval asks again.
 */

import { filesState, keysState } from "../tools/call/intent.js";
import { readRecord, recordsDir, type StoredRecord } from "../tools/records/records.js";
import type { ToolResult } from "../tools/types.js";
import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";
import type { ResumeDecision } from "./events.js";
import type { ChatMessage, ToolCall } from "./providers/types.js";

/** The calls of the session's last assistant message that no tool message answers. */
export interface Unanswered {
  /** The session number of that assistant message. */
  message: number;
  calls: ToolCall[];
}

export function unansweredCalls(messages: readonly ChatMessage[]): Unanswered | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    if (m.role !== "assistant") continue;
    const answered = new Set(messages.slice(i + 1).flatMap((r) => (r.role === "tool" ? [r.toolCallId] : [])));
    return { message: i, calls: m.toolCalls.filter((c) => !answered.has(c.id)) };
  }
  return undefined;
}

/** A record found for a call: its key and what it holds. */
export interface FoundRecord {
  key: string;
  record: StoredRecord;
}

/**
 * Whether a listed record is surely of another session message than `message` (its stored origin
 * names another): it is not parsed. Anything else — that message's, without an origin, damaged — is
 * parsed in full, so a damaged record is never taken for a missing one.
 */
function ofAnotherMessage(value: unknown, message: number): boolean {
  const origin = (value as { value?: { origin?: { message?: unknown } } } | undefined)?.value?.origin;
  return typeof origin?.message === "number" && origin.message !== message;
}

/**
 * The run's records of the calls of session message `message`, by tool call id (the last wins). A
 * resume needs only those: the records of earlier messages are skipped unparsed (a run's calls
 * would otherwise each cost a schema parse on every resume).
 */
export async function recordsOf(tree: Tree, vid: string, message: number): Promise<Map<string, FoundRecord>> {
  const out = new Map<string, FoundRecord>();
  let after: string | undefined;
  do {
    let page: Awaited<ReturnType<Tree["list"]>>;
    try {
      page = await tree.list(recordsDir(vid), { limit: 1000, ...(after ? { after } : {}) });
    } catch (err) {
      if (isTreeError(err, "TREE_NOT_FOUND")) return out; // no call recorded yet
      throw err;
    }
    for (const c of page.children) {
      if (c.kind === "index" || (c.kind === "json" && ofAnotherMessage(c.value, message))) continue;
      const record = readRecord(c.key, c.value ? { kind: c.kind, value: c.value } : await tree.get(c.key));
      if (record?.origin?.message === message) out.set(record.origin.id, { key: c.key, record });
    }
    after = page.next;
  } while (after);
  return out;
}

/** What a resume does with one unanswered call, and what it says it did (`TurnResult.resumed`). */
export type ResumeAction =
  /**
   * Run through the boundary: `retry` is the started record it replaces (absent: a new call);
   * `ask`: only once a person approves (the decision is then `approved` or `declined`).
   */
  | { do: "run"; retry?: string; decision: ResumeDecision; ask?: true }
  /** Answer without running: the result (recorded at `key`, replacing a started record when `settle`). */
  | { do: "answer"; key: string; result: ToolResult; settle: boolean; decision: ResumeDecision };

/** What deciding a call reads besides its record: the tree (tree writes) and the policy's `resumeUnknown`. */
export interface ResumeContext {
  tree: Tree;
  resumeUnknown: "report" | "ask";
}

export async function resumeAction(
  call: ToolCall,
  found: FoundRecord | undefined,
  ctx: ResumeContext,
): Promise<ResumeAction> {
  if (!found) return { do: "run", decision: "not_started" };
  const { key, record } = found;
  if (record.state !== "started")
    return {
      do: "answer",
      key,
      settle: false,
      decision: "recorded",
      result: {
        kind: record.kind,
        isError: record.isError,
        text: record.text,
        details: record.details,
        record: key,
      },
    };
  switch (record.sideEffect) {
    case "none":
      return { do: "run", retry: key, decision: "rerun" };
    case "http":
      return { do: "run", retry: key, decision: "resent" };
    case "files": {
      const state = await filesState(record.files ?? []);
      return byState(call, key, state, {
        applied: "every file it changes is as the call intended",
        details: {},
        changed: {
          text: "its file has changed since in a way that matches neither the state before the call nor the edit it intended. It was not run again. Read the file before editing it.",
          code: "file_changed",
        },
      });
    }
    case "tree": {
      // committed in the write's own transaction: the record is there only because the write is
      if (record.withWrite)
        return byState(call, key, "after", {
          applied: "its record was committed with its write",
          details: {},
          changed: { text: "", code: "key_changed" },
        });
      const state = await keysState(ctx.tree, record.keys ?? []);
      const keys = (record.keys ?? []).map((k) => k.key);
      return byState(call, key, state, {
        applied: "every key it writes holds what the call intended",
        details: { keys },
        changed: {
          text: `${keys.join(", ")} has changed since in a way that matches neither the state before the call nor the write it intended. It was not run again. tree.get it before writing it.`,
          code: "key_changed",
        },
      });
    }
    default:
      // `declined` until a person approves it (the loop says `approved` then)
      if (ctx.resumeUnknown === "ask") return { do: "run", retry: key, decision: "declined", ask: true };
      return answer(key, "unknown", {
        kind: "runtime",
        isError: true,
        text: `${call.name} was interrupted: the process running this run stopped during the call, so whether it took effect is unknown. It was not run again. Check what it would have changed before deciding to call it again.`,
        details: { code: "outcome_unknown", resumed: "unknown" },
      });
  }
}

/**
 * A started edit or tree write, decided from what it touches now: as before the call → run it once;
 * as the call intended → done, not run again; anything else → `changed.code`, not run again.
 */
function byState(
  call: ToolCall,
  key: string,
  state: "before" | "after" | "changed",
  says: {
    applied: string;
    details: Record<string, unknown>;
    changed: { text: string; code: "file_changed" | "key_changed" };
  },
): ResumeAction {
  if (state === "before") return { do: "run", retry: key, decision: "rerun" };
  if (state === "after")
    return answer(key, "applied", {
      kind: "ok",
      isError: false,
      text: `${call.name} had already been applied when the process running this run stopped (${says.applied}); it was not run again.`,
      details: { resumed: "applied", ...says.details },
    });
  const { code } = says.changed;
  return answer(key, code, {
    kind: "runtime",
    isError: true,
    text: `${call.name} was interrupted when the process running this run stopped, and ${says.changed.text}`,
    details: { code, resumed: code, ...says.details },
  });
}

function answer(key: string, decision: ResumeDecision, result: Omit<ToolResult, "record">): ResumeAction {
  return { do: "answer", key, settle: true, decision, result: { ...result, record: key } };
}
