import type { ToolNameMap } from "./tool-names.js";
import type { ChatResponse, StopReason, StreamEvent, ToolCall, Usage } from "./types.js";

/**
 * Builds a ChatResponse from pieces as they arrive, emitting the matching events. Both adapters
 * feed it, streaming or not, so the events and the response always agree: the deltas of a tool
 * call add up to its `argsText`.
 */
export interface Assembler {
  text(delta: string): void;
  /** Starts a tool call (the model's safe name is mapped back to ours); returns its index. */
  startCall(id: string, safeName: string): number;
  callDelta(index: number, delta: string): void;
  argsOf(index: number): string;
  hasCalls(): boolean;
  /** The response; emits `done`. */
  finish(stopReason: StopReason, usage: Usage): ChatResponse;
}

export function createAssembler(names: ToolNameMap, onEvent?: (event: StreamEvent) => void): Assembler {
  let text = "";
  const calls: ToolCall[] = [];
  const emit = onEvent ?? (() => {});
  return {
    text(delta) {
      if (delta === "") return;
      text += delta;
      emit({ type: "text_delta", delta });
    },
    startCall(id, safeName) {
      const index = calls.length;
      const call: ToolCall = { id, name: names.fromSafe(safeName), argsText: "" };
      calls.push(call);
      emit({ type: "toolcall_start", index, id: call.id, name: call.name });
      return index;
    },
    callDelta(index, delta) {
      const call = calls[index];
      if (call === undefined || delta === "") return;
      call.argsText += delta;
      emit({ type: "toolcall_delta", index, delta });
    },
    argsOf(index) {
      return calls[index]?.argsText ?? "";
    },
    hasCalls() {
      return calls.length > 0;
    },
    finish(stopReason, usage) {
      const response: ChatResponse = { text, toolCalls: calls.map((c) => ({ ...c })), stopReason, usage };
      emit({ type: "done", response });
      return response;
    },
  };
}
