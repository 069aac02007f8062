/**
 * The step a resumed run starts with: the calls of its last assistant message that no tool message
 * answers, each decided from its record (agent/resume.ts) — fed back, settled without running, or
 * run again through the boundary — then the round ends as any other.
 */
import type { StoredRecord, ToolRecord } from "../tools/records/records.js";
import { writeRecord } from "../tools/records/records.js";
import type { ToolResult } from "../tools/types.js";
import type { ResumedCall } from "./events.js";
import { type ResumeContext, recordsOf, resumeAction, type Unanswered } from "./resume.js";
import { afterRound, answerCalls, runCall } from "./turn-calls.js";
import type { TurnDeps, TurnState } from "./turn-state.js";

/** Answers the interrupted round; tells whether the turn ends with it. */
export async function resumeRound(
  d: TurnDeps,
  s: TurnState,
  pending: Unanswered,
  resumeUnknown: ResumeContext["resumeUnknown"],
): Promise<boolean> {
  const { vid, messages, result } = s;
  const resumed: ResumedCall[] = [];
  result.resumed = resumed;
  const found = await recordsOf(d.tree, vid, pending.message);
  const ctx: ResumeContext = { tree: d.tree, resumeUnknown };
  const round = await answerCalls(s, pending.calls, async (call) => {
    const action = await resumeAction(call, found.get(call.id), ctx);
    const told: ResumedCall = { id: call.id, name: call.name, decision: action.decision };
    resumed.push(told);
    if (action.do === "run")
      return runCall(
        d,
        s,
        call,
        { message: pending.message, id: call.id },
        {
          ...(action.retry ? { retry: action.retry } : {}),
          ...(action.ask
            ? {
                askRerun: {
                  decided(approved) {
                    told.decision = approved ? "approved" : "declined";
                  },
                },
              }
            : {}),
          asked(approval) {
            told.approval = approval;
          },
        },
      );
    if (action.settle) await settleRecord(d, vid, action.key, found.get(call.id)?.record, action.result);
    return action.result;
  });
  const assistant = messages[pending.message];
  const text = assistant?.role === "assistant" ? assistant.text : "";
  return afterRound(d, s, round, pending.calls.length, text);
}

/** A started record a resume answers without running the call: its result replaces it. */
async function settleRecord(
  d: TurnDeps,
  vid: string,
  key: string,
  started: StoredRecord | undefined,
  r: ToolResult,
): Promise<void> {
  const { record: _key, terminate: _t, ...rest } = r;
  await writeRecord(
    d.tree,
    d.logger,
    vid,
    { ...(started as ToolRecord), ...rest, state: "done", ms: 0 },
    key,
  );
}
