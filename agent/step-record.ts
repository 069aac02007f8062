/**
 * What the loop keeps with each model answer, besides the answer itself, so a run can be replayed
 * and two runs compared from the tree alone (agent/replay/): why the model stopped, the tokens it
 * reported, the date the prompt was built for, and what it was asked — a hash of the system text
 * and of each tool schema sent, with the system text and the tool hashes themselves on a turn's
 * first step and whenever they change within the turn (so a diff can show the lines that changed
 * without storing the prompt on every step).
 */
import { createHash } from "node:crypto";
import type { PromptTool } from "../prompts/build.js";
import { hashOf } from "../tools/catalogue/hash.js";
import type { StepRecord, StopReason, ToolCall, Usage } from "./providers/types.js";

export type { StepRecord } from "./providers/types.js";

/** The prompt as a step record names it: its hash, and the parts it is made of. */
export interface PromptDigest {
  hash: string;
  system: string;
  tools: Record<string, string>;
}

/** A tool schema's hash, memoised on its parameters object (the catalogue keeps it while the declaration holds). */
const toolHashes = new WeakMap<object, { description: string; hash: string }>();

export function toolHash(tool: PromptTool): string {
  const hit = toolHashes.get(tool.parameters);
  if (hit?.description === tool.description) return hit.hash;
  const hash = hashOf({ description: tool.description, parameters: tool.parameters }).slice(0, 16);
  toolHashes.set(tool.parameters, { description: tool.description, hash });
  return hash;
}

/** The digest of what a step sends the model. */
export function digestPrompt(system: string, tools: readonly PromptTool[]): PromptDigest {
  const byName: Record<string, string> = {};
  for (const t of tools) byName[t.name] = toolHash(t);
  const h = createHash("sha256").update(system).update("\0");
  for (const name of Object.keys(byName).sort()) h.update(`${name}=${byName[name]}\n`);
  return { hash: h.digest("hex"), system, tools: byName };
}

/** The hash an answer is recorded with: of its text and its calls (id, name, argument text). */
export function answerHash(answer: { text: string; toolCalls: readonly ToolCall[] }): string {
  const calls = answer.toolCalls.map((c) => ({ id: c.id, name: c.name, argsText: c.argsText }));
  return hashOf({ text: answer.text, toolCalls: calls });
}

/** The step record of an answer; `previous` is the digest of the turn's previous step, if any. */
export function stepRecord(
  digest: PromptDigest,
  reply: { text: string; toolCalls: readonly ToolCall[]; stopReason: StopReason; usage: Usage },
  at: number,
  previous: PromptDigest | undefined,
): StepRecord {
  const record: StepRecord = {
    stop: reply.stopReason,
    usage: reply.usage,
    at,
    prompt: digest.hash,
    answer: answerHash(reply),
  };
  if (previous?.system !== digest.system) record.system = digest.system;
  if (!previous || !sameTools(previous.tools, digest.tools)) record.tools = digest.tools;
  return record;
}

function sameTools(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
