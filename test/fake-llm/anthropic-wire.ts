import { pieces } from "./openai-wire.js";
import type { EncodedStream, FakeRequest, Planned } from "./types.js";

/** Anthropic messages, as the fake writes them. */

const STOP = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" } as const;

export function anthropicStream(request: FakeRequest, reply: Planned): EncodedStream {
  const content = [
    event("message_start", {
      type: "message_start",
      message: {
        id: `msg_${request.index}`,
        type: "message",
        role: "assistant",
        model: request.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: reply.usage.inputTokens, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  if (reply.text !== "") {
    content.push(
      event("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "text", text: "" },
      }),
    );
    content.push(event("ping", { type: "ping" }));
    for (const text of pieces(reply.text, reply.chunkSize))
      content.push(
        event("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "text_delta", text },
        }),
      );
    content.push(event("content_block_stop", { type: "content_block_stop", index }));
    index++;
  }
  for (const call of reply.calls) {
    content.push(
      event("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
      }),
    );
    for (const partial_json of pieces(call.argsText, reply.chunkSize))
      content.push(
        event("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json },
        }),
      );
    content.push(event("content_block_stop", { type: "content_block_stop", index }));
    index++;
  }
  const end = [
    event("message_delta", {
      type: "message_delta",
      delta: { stop_reason: STOP[reply.stop], stop_sequence: null },
      usage: { output_tokens: reply.usage.outputTokens },
    }),
    event("message_stop", { type: "message_stop" }),
  ];
  return { content, end };
}

export function anthropicJson(request: FakeRequest, reply: Planned): unknown {
  return {
    id: `msg_${request.index}`,
    type: "message",
    role: "assistant",
    model: request.model,
    content: [
      ...(reply.text === "" ? [] : [{ type: "text", text: reply.text }]),
      ...reply.calls.map((c) => ({
        type: "tool_use",
        id: c.id,
        name: c.name,
        input: parseOrEmpty(c.argsText),
      })),
    ],
    stop_reason: STOP[reply.stop],
    stop_sequence: null,
    usage: { input_tokens: reply.usage.inputTokens, output_tokens: reply.usage.outputTokens },
  };
}

export function anthropicError(message: string, status: number): unknown {
  const type =
    status === 429
      ? "rate_limit_error"
      : status === 529
        ? "overloaded_error"
        : status >= 500
          ? "api_error"
          : "invalid_request_error";
  return { type: "error", error: { type, message } };
}

/** A whole JSON reply cannot carry half-written input: it becomes `{}`. */
function parseOrEmpty(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function event(name: string, value: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(value)}\n\n`;
}
