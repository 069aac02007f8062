import type { EncodedStream, FakeRequest, Planned } from "./types.js";

/** OpenAI chat completions, as the fake writes them. */

const FINISH = { stop: "stop", length: "length", tool_calls: "tool_calls" } as const;

export function openAiStream(request: FakeRequest, reply: Planned): EncodedStream {
  const base = {
    id: `chatcmpl-${request.index}`,
    object: "chat.completion.chunk",
    created: 1,
    model: request.model,
  };
  const chunk = (delta: unknown, finish: string | null = null) =>
    data({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const content = [chunk({ role: "assistant", content: "" })];
  for (const piece of pieces(reply.text, reply.chunkSize)) content.push(chunk({ content: piece }));
  for (const [position, call] of reply.calls.entries()) {
    const index = reply.sharedCallIndex ? 0 : position;
    content.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    for (const piece of pieces(call.argsText, reply.chunkSize))
      content.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  const end = [chunk({}, FINISH[reply.stop])];
  const options = request.body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage) end.push(data({ ...base, choices: [], usage: usage(reply) }));
  end.push("data: [DONE]\n\n");
  return { content, end };
}

export function openAiJson(request: FakeRequest, reply: Planned): unknown {
  return {
    id: `chatcmpl-${request.index}`,
    object: "chat.completion",
    created: 1,
    model: request.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.text === "" ? null : reply.text,
          ...(reply.calls.length > 0
            ? {
                tool_calls: reply.calls.map((c) => ({
                  id: c.id,
                  type: "function",
                  function: { name: c.name, arguments: c.argsText },
                })),
              }
            : {}),
        },
        finish_reason: FINISH[reply.stop],
      },
    ],
    usage: usage(reply),
  };
}

export function openAiError(message: string, status: number): unknown {
  const type =
    status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, code: null } };
}

function usage(reply: Planned) {
  const { inputTokens, outputTokens } = reply.usage;
  return {
    prompt_tokens: inputTokens,
    completion_tokens: outputTokens,
    total_tokens: inputTokens + outputTokens,
  };
}

function data(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** `text` in pieces of `size` characters (code points, so no surrogate pair is split). */
export function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}
