/**
 * A step of the turn loop: ask the model (the prompt rebuilt from the tree), store its answer —
 * with the previous round's results and the step's tokens, in one commit — then answer the calls
 * it asked for. `drive` steps until the model answers without tools or the run stops.
 */
import { buildPrompt } from "../prompts/build.js";
import { readPrompt } from "../prompts/defaults.js";
import type { ChatResponse } from "./providers/types.js";
import { commitRun } from "./run-commit.js";
import { digestPrompt, stepRecord } from "./step-record.js";
import { afterRound, answerCalls, recordSynthetic, runCall } from "./turn-calls.js";
import type { TurnDeps, TurnState } from "./turn-state.js";

/** The model's answer to one step, and what it was asked. */
interface Answered {
  reply: ChatResponse;
  digest: ReturnType<typeof digestPrompt>;
  /** When the prompt was built (its `{{date}}`). */
  at: number;
  model: string;
}

/** Rebuilds the prompt from the tree and asks the model. */
async function askModel(d: TurnDeps, s: TurnState): Promise<Answered> {
  const at = d.clock();
  const prompt = await buildPrompt({
    tree: d.tree,
    runtime: d.runtime,
    vid: s.vid,
    input: s.input,
    found: s.found,
    date: new Date(at),
  });
  const digest = digestPrompt(prompt.system, prompt.tools);
  const provider = await d.provider(s.o.llm);
  const reply = await provider.complete(
    { system: prompt.system, messages: s.messages, tools: prompt.tools },
    { signal: s.signal, onEvent: (e) => e.type !== "done" && s.emit(e) },
  );
  return { reply, digest, at, model: provider.model };
}

/**
 * Stores the step in one commit: the results not stored yet, the model's answer (with its step
 * record) and the step's tokens. Answers the answer's session number (its calls' origin).
 */
async function storeAnswer(d: TurnDeps, s: TurnState, a: Answered): Promise<number> {
  const { reply } = a;
  s.result.usage.inputTokens += reply.usage.inputTokens;
  s.result.usage.outputTokens += reply.usage.outputTokens;
  const answer = {
    role: "assistant" as const,
    text: reply.text,
    toolCalls: reply.toolCalls,
    step: { ...stepRecord(a.digest, reply, a.at, s.asked), model: a.model },
  };
  s.asked = a.digest;
  const usage = {
    turns: 0,
    steps: s.result.steps - s.counted.steps,
    input: s.result.usage.inputTokens - s.counted.input,
    output: s.result.usage.outputTokens - s.counted.output,
  };
  const numbers = await commitRun(d.tree, s.vid, { messages: [...s.unsaved, answer], usage });
  s.messages.push(answer);
  s.unsaved = [];
  s.counted = {
    steps: s.result.steps,
    input: s.result.usage.inputTokens,
    output: s.result.usage.outputTokens,
  };
  return numbers.at(-1) ?? s.messages.length - 1;
}

/** Answers the step's calls: none runs when the reply was cut off by the token limit, each is told why. */
async function runCalls(d: TurnDeps, s: TurnState, reply: ChatResponse, message: number) {
  const truncated = reply.stopReason === "length";
  const truncatedText = truncated ? await readPrompt(d.tree, "truncated") : "";
  return answerCalls(s, reply.toolCalls, (call) =>
    truncated
      ? recordSynthetic(d, s.vid, call, "truncated", "truncated", truncatedText, { message, id: call.id })
      : runCall(d, s, call, { message, id: call.id }),
  );
}

/** One step; tells whether the turn ends with it. */
async function step(d: TurnDeps, s: TurnState): Promise<boolean> {
  const { result } = s;
  if (s.signal.aborted) {
    result.reason = "aborted";
    result.text = "the turn was aborted";
    return true;
  }
  if (result.steps >= d.maxSteps) {
    result.reason = "max_steps";
    result.text = `the turn stopped after ${d.maxSteps} steps without a final answer`;
    return true;
  }
  result.steps++;
  s.emit({ type: "step", step: result.steps });
  const answered = await askModel(d, s);
  const message = await storeAnswer(d, s, answered);
  const { reply } = answered;
  if (reply.toolCalls.length === 0) {
    result.text = reply.text;
    result.reason = "done";
    return true;
  }
  const round = await runCalls(d, s, reply, message);
  return afterRound(d, s, round, reply.toolCalls.length, reply.text);
}

/** Steps until the model answers without tools or the run stops; a failure becomes the result's reason. */
export async function drive(d: TurnDeps, s: TurnState): Promise<void> {
  const { result } = s;
  try {
    while (!(await step(d, s))) {
      // the next step
    }
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (s.signal.aborted || e.code === "LLM_ABORTED") {
      result.reason = "aborted";
      result.text = "the turn was aborted";
    } else {
      result.reason = "model_error";
      result.text = e.message ?? String(err);
      result.error = { code: e.code ?? "AGENT_FAILED", message: result.text };
      s.log.error({ err }, "turn failed");
    }
  }
}
