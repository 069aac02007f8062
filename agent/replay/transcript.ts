/**
 * A finished run as its records tell it, read from the tree: its turns (each a user input and the
 * model's steps), each step's answer and calls, and each call's result as the model saw it (the
 * session's tool message) beside its record (`/byteseek/tool/<vid>/<n>`, paired by the record's
 * `origin` — the session message and tool call id it answers — so a record another caller added to
 * the run, or a resumed run's retried or settled one, never shifts the pairs; records written before
 * `origin` existed pair in order). Replay and diff read runs
 * through this one reader. Messages and records are parsed, not cast; older records without the
 * newer fields (step records, intent states) read as well.
 */
import { z } from "zod";
import { docFamily, parseDocValue } from "../../tools/doc/read-write.js";
import { type SessionMessage, SessionMessageDoc } from "../../tools/doc/session-message.js";
import { recordsDir } from "../../tools/records/records.js";
import { usageKey } from "../../tools/records/usage.js";
import { isTreeError } from "../../tree/errors.js";
import type { ListChild, Tree } from "../../tree/types.js";
import { formatValue } from "../../tree/value.js";
import { AgentError } from "../errors.js";
import type { AssistantMessage, StepRecord } from "../providers/types.js";
import { reasonKey, sessionDir, statusKey } from "../run-keys.js";

/** A call record as stored; a record of an intent not yet done (`state: "started"`) has no result fields. */
export const RecordJson = z.looseObject({
  name: z.string(),
  args: z.unknown(),
  kind: z.string().optional(),
  isError: z.boolean().optional(),
  text: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
  decl: z.looseObject({ key: z.string(), hash: z.string() }).optional(),
  terminate: z.boolean().optional(),
  state: z.string().optional(),
  origin: z.object({ message: z.number(), id: z.string() }).optional(),
  approval: z.string().optional(),
});
export type RecordJson = z.infer<typeof RecordJson>;
/** Call records as a replay reads and copies them: older ones, and started ones without a result, included. */
export const ReplayRecordDoc = docFamily("a call record", RecordJson);

export interface RecordedCall {
  id: string;
  name: string;
  argsText: string;
  /** What the model got back (the session's tool message); absent when the run ended first. */
  result?: { content: string; isError: boolean };
  /** The call's record, paired by its origin (by order for records without one); absent when it has none. */
  record?: { key: string; value: RecordJson };
}

export interface RecordedStep {
  /** 1-based, counted over the whole run (as `byteseek run` prints steps within a turn: see `turnStep`). */
  index: number;
  /** 1-based, within its turn. */
  turnStep: number;
  /** 0-based index of its turn. */
  turn: number;
  /** Where the answer is in `RunTranscript.messages`: what the model was sent is every message before it. */
  message: number;
  answer: AssistantMessage;
  calls: RecordedCall[];
}

export interface RecordedTurn {
  input: string;
  steps: RecordedStep[];
}

export interface RunTranscript {
  vid: string;
  /** `/vthread/<vid>/status`: running, waiting …, done, failed, interrupted; absent when never set. */
  status?: string;
  /** How the last turn ended (`/vthread/<vid>/reason`): `done`, `terminated`, or `<reason>: <text>`. */
  reason?: string;
  turns: RecordedTurn[];
  /** Every session message, in order (what the model was sent, step by step). */
  messages: SessionMessage[];
  /** The records of the run in order, paired or not. */
  records: Array<{ key: string; value: RecordJson }>;
  /** `/byteseek/usage/<vid>`: the run's token totals over every turn. */
  tokens?: { input: number; output: number };
}

/** Reads run `vid`; AGENT_RUN_NOT_FOUND when it has no messages. */
export async function readTranscript(tree: Tree, vid: string): Promise<RunTranscript> {
  const [children, recordChildren, status, reason, usage] = await Promise.all([
    listAll(tree, sessionDir(vid)),
    listAll(tree, recordsDir(vid)),
    readText(tree, statusKey(vid)),
    readText(tree, reasonKey(vid)),
    tree.get(usageKey(vid)),
  ]);
  if (children.length === 0)
    throw new AgentError(
      "AGENT_RUN_NOT_FOUND",
      `there is no run ${vid}: nothing under ${sessionDir(vid)} (kvspace list /byteseek/session/ lists the runs)`,
      { vid },
    );
  // a message that is not one the agent loop writes is DOC_MALFORMED, naming its key
  const messages = children.map((c) =>
    parseDocValue(SessionMessageDoc, `${sessionDir(vid)}${c.name}`, c.value, c.kind),
  );
  const records = recordChildren.flatMap((c) => {
    const parsed = RecordJson.safeParse(c.value?.kind === "json" ? c.value.value : undefined);
    return parsed.success ? [{ key: `${recordsDir(vid)}${c.name}`, value: parsed.data }] : [];
  });
  const transcript: RunTranscript = { vid, turns: [], messages, records };
  if (status !== undefined) transcript.status = status;
  if (reason !== undefined) transcript.reason = reason;
  const tokens = tokensOf(usage?.kind === "json" ? usage.value.value : undefined);
  if (tokens) transcript.tokens = tokens;
  pair(transcript);
  return transcript;
}

/**
 * Builds the turns from the messages and pairs each tool message with the record whose origin is
 * its call (the last such record), else with the next record that names no origin.
 */
function pair(t: RunTranscript): void {
  let turn: RecordedTurn | undefined;
  let step: RecordedStep | undefined;
  let index = 0;
  let nextRecord = 0;
  const byOrigin = new Map<string, { key: string; value: RecordJson }>();
  const unplaced: Array<{ key: string; value: RecordJson }> = [];
  for (const r of t.records)
    if (r.value.origin) byOrigin.set(`${r.value.origin.message}/${r.value.origin.id}`, r);
    else unplaced.push(r);
  for (const [at, m] of t.messages.entries()) {
    if (m.role === "user") {
      turn = { input: m.content, steps: [] };
      t.turns.push(turn);
      step = undefined;
    } else if (m.role === "assistant") {
      if (!turn) {
        turn = { input: "", steps: [] };
        t.turns.push(turn);
      }
      const answer: AssistantMessage = { role: "assistant", text: m.text, toolCalls: m.toolCalls };
      if (m.step) answer.step = m.step;
      step = {
        index: ++index,
        turnStep: turn.steps.length + 1,
        turn: t.turns.length - 1,
        message: at,
        answer,
        calls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, argsText: c.argsText })),
      };
      turn.steps.push(step);
    } else {
      const call = step?.calls.find((c) => c.id === m.toolCallId && c.result === undefined);
      if (!call) continue;
      call.result = { content: m.content, isError: m.isError };
      const record = byOrigin.get(`${step?.message}/${call.id}`) ?? unplaced[nextRecord++];
      if (record) call.record = record;
    }
  }
}

type ValueChild = Exclude<ListChild, { kind: "index" }>;

async function listAll(tree: Tree, dir: string): Promise<ValueChild[]> {
  const out: ValueChild[] = [];
  let after: string | undefined;
  try {
    do {
      const page = await tree.list(dir, { limit: 1000, ...(after ? { after } : {}) });
      for (const c of page.children) if (c.kind !== "index") out.push(c);
      after = page.next;
    } while (after);
  } catch (err) {
    if (!isTreeError(err, "TREE_NOT_FOUND")) throw err;
  }
  return out;
}

async function readText(tree: Tree, key: string): Promise<string | undefined> {
  const node = await tree.get(key);
  return node && node.kind !== "index" ? formatValue(node.value) : undefined;
}

function tokensOf(value: unknown): { input: number; output: number } | undefined {
  const tokens = (value as { tokens?: { input?: unknown; output?: unknown } } | undefined)?.tokens;
  if (typeof tokens?.input !== "number" || typeof tokens.output !== "number") return undefined;
  return { input: tokens.input, output: tokens.output };
}

/** The last turn's end as recorded: its stop reason and, for a failure, its text. */
export function recordedEnd(t: RunTranscript): { reason: string; text: string } | undefined {
  if (t.reason === undefined) return undefined;
  const colon = t.reason.indexOf(": ");
  return colon < 0
    ? { reason: t.reason, text: "" }
    : { reason: t.reason.slice(0, colon), text: t.reason.slice(colon + 2) };
}

/** The system text and tools a step was sent: kept on its turn's first step and where they changed. */
export function promptAt(
  t: RunTranscript,
  step: RecordedStep,
): Partial<Pick<StepRecord, "system" | "tools">> {
  const out: Partial<Pick<StepRecord, "system" | "tools">> = {};
  for (const s of t.turns[step.turn]?.steps ?? []) {
    if (s.turnStep > step.turnStep) break;
    if (s.answer.step?.system !== undefined) out.system = s.answer.step.system;
    if (s.answer.step?.tools !== undefined) out.tools = s.answer.step.tools;
  }
  return out;
}
