/**
 * A model provider that answers from a run's record: the n-th request gets the n-th recorded
 * answer (its text, calls, stop reason and tokens), streamed as one text delta and one delta per
 * call, so whoever shows the turn shows what it showed. It sends nothing anywhere. Before
 * answering it checks what the loop sends: the messages must be the recorded ones (else the run
 * diverged), and a prompt whose hash differs from the recorded one is noted (the template, a
 * declaration or the workspace changed since), with the lines that differ where the run kept them.
 */
import { AgentError } from "../errors.js";
import type { ChatMessage, ChatResponse, Provider, StopReason, Usage } from "../providers/types.js";
import { answerHash, digestPrompt, type PromptDigest } from "../step-record.js";
import { oneLine, textDiff, toolsDiff } from "./compare.js";
import { at, type ReplayState } from "./state.js";
import { promptAt, type RecordedStep, recordedEnd } from "./transcript.js";
import type { DivergenceKind, ReplayNote } from "./types.js";

export function createRecordedProvider(state: ReplayState): Provider {
  const { transcript } = state;
  const stepRecorded = state.steps.some((s) => s.answer.step !== undefined);
  let promptNote: (ReplayNote & { count: number }) | undefined;
  if (!stepRecorded && state.steps.length > 0)
    state.notes.push({
      kind: "unrecorded",
      text: "the run was recorded before byteseek kept each step's prompt hash and tokens: prompts are not compared, and the tokens shown are the run's totals",
    });

  /** The answer's tokens: recorded with it, or (older runs) the run's totals on its first step. */
  function usageOf(step: RecordedStep): Usage {
    if (step.answer.step) return step.answer.step.usage;
    if (step.index !== 1 || !transcript.tokens) return { inputTokens: 0, outputTokens: 0 };
    return { inputTokens: transcript.tokens.input, outputTokens: transcript.tokens.output };
  }

  function stopOf(step: RecordedStep): StopReason {
    if (step.answer.step) return step.answer.step.stop;
    if (step.calls.length === 0) return "stop";
    return step.calls.every((c) => c.record?.value.kind === "truncated") ? "length" : "tool_calls";
  }

  /** The messages the loop sends must be those the run sent; each is compared once. */
  function checkMessages(messages: readonly ChatMessage[], step: RecordedStep): boolean {
    const recorded = transcript.messages;
    const end = Math.min(messages.length, step.message);
    for (let i = state.compared; i < end; i++) {
      const sent = messages[i] as ChatMessage;
      const want = recorded[i] as ChatMessage;
      if (!sameMessage(sent, want)) {
        const kind: DivergenceKind =
          want.role === "user" ? "prompt" : want.role === "tool" ? "result" : "answer";
        state.diverge({
          kind,
          ...at(step),
          summary: `message ${i} sent to the model differs from the recorded one (${want.role})`,
          diff: textDiff(messageText(want), messageText(sent), ["recorded", "replayed"]),
        });
        return false;
      }
    }
    state.compared = end;
    if (messages.length !== step.message) {
      state.diverge({
        kind: "prompt",
        ...at(step),
        summary: `the loop sent the model ${messages.length} messages at this step; the run sent ${step.message}`,
        diff: [],
      });
      return false;
    }
    return true;
  }

  /** Notes a prompt other than the recorded one: the first such step in full, later ones counted. */
  function checkPrompt(digest: PromptDigest, step: RecordedStep): void {
    const recorded = step.answer.step;
    if (!recorded || recorded.prompt === digest.hash) return;
    if (promptNote) {
      promptNote.count++;
      promptNote.text = `${promptText(promptNote.step ?? step.index)} (and at ${promptNote.count - 1} later step${promptNote.count === 2 ? "" : "s"})`;
      return;
    }
    const was = promptAt(transcript, step);
    const diff = [
      ...(was.system !== undefined && was.system !== digest.system
        ? textDiff(was.system, digest.system, ["recorded system prompt", "system prompt now"])
        : []),
      ...(was.tools ? toolsDiff(was.tools, digest.tools, ["the run", "now"]) : []),
    ];
    promptNote = { kind: "prompt", step: step.index, text: promptText(step.index), diff, count: 1 };
    state.notes.push(promptNote);
  }

  /** The answer must be the one recorded: its step record pins its hash (runs recorded before that pass). */
  function checkAnswer(step: RecordedStep): boolean {
    const pinned = step.answer.step?.answer;
    if (pinned === undefined || pinned === answerHash(step.answer)) return true;
    state.diverge({
      kind: "answer",
      ...at(step),
      summary: `the model's answer at step ${step.index} is not the one recorded with it (its hash is not the one its step record pinned): the session message was changed after the run`,
      diff: [],
    });
    return false;
  }

  /** The loop asks for an answer its turn never got: how the recorded turn ended says what to do. */
  function beyondRecord(): never {
    const last = state.turn === transcript.turns.length - 1;
    const end = last ? recordedEnd(transcript) : undefined;
    if (end?.reason === "model_error") throw new AgentError("LLM_BAD_RESPONSE", end.text);
    if (end?.reason === "aborted") throw new AgentError("LLM_ABORTED", "the turn was aborted");
    const step = state.current() ?? state.steps[state.steps.length - 1];
    if (step)
      state.diverge({
        kind: "answer",
        ...at(step),
        summary: `the loop asked the model for another answer after step ${step.index}; the run's turn ${step.turn + 1} ended there${end ? ` (${end.reason})` : ""}`,
        diff: [],
      });
    throw new AgentError("LLM_ABORTED", "the replay stopped where the run diverged from its record");
  }

  return {
    api: "openai",
    model: "recorded",
    async complete(request, { signal, onEvent }): Promise<ChatResponse> {
      if (state.divergence || signal.aborted)
        throw new AgentError("LLM_ABORTED", "the replay stopped where the run diverged from its record");
      const step = state.steps[state.cursor];
      if (!step || step.turn !== state.turn) beyondRecord();
      if (!checkMessages(request.messages, step))
        throw new AgentError("LLM_ABORTED", "the replay stopped where the run diverged from its record");
      checkPrompt(digestPrompt(request.system, request.tools), step);
      if (!checkAnswer(step))
        throw new AgentError("LLM_ABORTED", "the replay stopped where the run diverged from its record");
      state.cursor++;
      const { text, toolCalls } = step.answer;
      if (text !== "") onEvent?.({ type: "text_delta", delta: text });
      for (const [index, c] of toolCalls.entries()) {
        onEvent?.({ type: "toolcall_start", index, id: c.id, name: c.name });
        onEvent?.({ type: "toolcall_delta", index, delta: c.argsText });
      }
      return { text, toolCalls, stopReason: stopOf(step), usage: usageOf(step) };
    },
    async close() {},
  };
}

function promptText(step: number): string {
  return `the prompt differs from the recorded one from step ${step} on (a template, a declaration, the memory or the workspace changed since the run)`;
}

function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  if (a.role !== b.role) return false;
  if (a.role === "user") return a.content === (b as typeof a).content;
  if (a.role === "tool") {
    const t = b as typeof a;
    return a.toolCallId === t.toolCallId && a.content === t.content && a.isError === t.isError;
  }
  const m = b as typeof a;
  return (
    a.text === m.text &&
    a.toolCalls.length === m.toolCalls.length &&
    a.toolCalls.every((c, i) => {
      const d = m.toolCalls[i];
      return d !== undefined && c.id === d.id && c.name === d.name && c.argsText === d.argsText;
    })
  );
}

function messageText(m: ChatMessage): string {
  if (m.role === "user") return m.content;
  if (m.role === "tool") return `${m.isError ? "(error) " : ""}${m.content}`;
  return [m.text, ...m.toolCalls.map((c) => `→ ${c.name} ${oneLine(c.argsText)}`)].join("\n");
}
