/**
 * A run's state written in one transaction per step: the messages not stored yet (the previous
 * round's tool results, then the model's answer), the run's keys that change (status, reason, last
 * turn) and its token counters — one commit, guarded by a compare on the counters' version, so
 * the runtime's call counters written meanwhile (tools/usage.ts) are never lost: a raced commit
 * stored nothing and is tried again on the counters read back.
 *
 * Tool results wait for the next commit: until then the call's `done` record (written by the
 * runtime before its result is returned) is the durable answer, and a resume feeds it back.
 */

import { docValue } from "../tools/doc/read-write.js";
import { SessionMessageDoc } from "../tools/doc/session-message.js";
import { usageKey } from "../tools/records/usage.js";
import type { Tree, TreeNode, TxnOp, WriteResult } from "../tree/types.js";
import { type Json, json, type TreeValue } from "../tree/value.js";
import type { ChatMessage } from "./providers/types.js";
import { sessionDir } from "./run-keys.js";

/** What a turn adds to `/byteseek/usage/<vid>` beside the runtime's call counters. */
export interface TurnUsage {
  turns: number;
  steps: number;
  input: number;
  output: number;
}

export interface RunCommit {
  /** Messages appended to the session, in order. */
  messages: readonly ChatMessage[];
  /** Keys set, in order (a reason before the status it explains). */
  sets?: ReadonlyArray<readonly [key: string, value: TreeValue]>;
  /** Added to the run's usage counters. */
  usage?: TurnUsage;
}

/**
 * Messages one commit appends at most: a transaction holds 128 operations, and on etcd an append
 * is more than one etcd operation (the value, its directory's sequence). More go first, apart.
 */
const MAX_MESSAGES = 32;
/** How often a commit whose counters another writer changed meanwhile is tried again. */
const MAX_ATTEMPTS = 50;

/** Stores `c` for run `vid`; answers the session numbers of the messages appended. */
export async function commitRun(tree: Tree, vid: string, c: RunCommit): Promise<number[]> {
  const numbers: number[] = [];
  let messages = c.messages;
  while (messages.length > MAX_MESSAGES) {
    const res = await tree.txn({ success: appends(vid, messages.slice(0, MAX_MESSAGES)) });
    numbers.push(...sessionNumbers(vid, res.results));
    messages = messages.slice(MAX_MESSAGES);
  }
  const ops = [
    ...appends(vid, messages),
    ...(c.sets ?? []).map(([key, value]): TxnOp => ({ op: "set", key, value, vid })),
  ];
  if (!c.usage) {
    const res = await tree.txn({ success: ops });
    return [...numbers, ...sessionNumbers(vid, res.results)];
  }
  const key = usageKey(vid);
  let node = await tree.get(key);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const usage = json(addUsage(counters(node), c.usage));
    const res = await tree.txn({
      compare: [{ key, target: "version", value: node?.version ?? 0 }],
      success: [...ops, { op: "set", key, value: usage, ro: true, force: true }],
      failure: [{ op: "get", key }],
    });
    if (res.succeeded) return [...numbers, ...sessionNumbers(vid, res.results)];
    node = (res.results[0] as TreeNode | null) ?? undefined;
  }
  // the counters kept changing: the step is stored without its tokens rather than not at all
  const res = await tree.txn({ success: ops });
  return [...numbers, ...sessionNumbers(vid, res.results)];
}

function appends(vid: string, messages: readonly ChatMessage[]): TxnOp[] {
  return messages.map((m) => ({
    op: "append",
    key: sessionDir(vid),
    value: docValue(SessionMessageDoc, m),
    vid,
  }));
}

/** The `<n>` of each session append among a transaction's results. */
function sessionNumbers(vid: string, results: ReadonlyArray<WriteResult | TreeNode | null>): number[] {
  const dir = sessionDir(vid);
  const out: number[] = [];
  for (const r of results) {
    const key = r && "key" in r ? r.key : undefined;
    if (key?.startsWith(dir)) out.push(Number(key.slice(dir.length)));
  }
  return out;
}

function counters(node: TreeNode | undefined): Record<string, Json> {
  return node?.kind === "json" && isObject(node.value.value) ? node.value.value : {};
}

/** The usage document with a turn's tokens, turns and steps (model calls) added; other fields kept. */
export function addUsage(base: Record<string, Json>, u: TurnUsage): Json {
  const tokens = isObject(base.tokens) ? base.tokens : {};
  return {
    ...base,
    turns: num(base.turns) + u.turns,
    steps: num(base.steps) + u.steps,
    tokens: { input: num(tokens.input) + u.input, output: num(tokens.output) + u.output },
  };
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}
