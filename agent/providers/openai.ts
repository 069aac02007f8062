import { z } from "zod";
import { readSse } from "../../shared/sse.js";
import { AgentError } from "../errors.js";
import type { LlmConfig } from "../llm-config.js";
import { createWireProvider, type ProviderDeps, type WireFormat } from "./connection.js";
import type { ToolNameMap } from "./tool-names.js";
import type { ChatRequest, Provider, StopReason, Usage } from "./types.js";
import { collect, parse } from "./wire.js";

/** OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server, Ollama): `POST {url}/chat/completions`. */
export function createOpenAiProvider(config: LlmConfig, deps: ProviderDeps = {}): Provider {
  return createWireProvider(config, deps, {
    api: "openai",
    path: "/chat/completions",
    headers: (c): Record<string, string> => (c.key === undefined ? {} : { authorization: `Bearer ${c.key}` }),
    toWire,
    readJson,
    readStream,
  });
}

function toWire(request: ChatRequest, names: ToolNameMap, config: LlmConfig, stream: boolean) {
  const messages: Record<string, unknown>[] = [];
  if (request.system !== "") messages.push({ role: "system", content: request.system });
  for (const m of request.messages) {
    if (m.role === "user") messages.push({ role: "user", content: m.content });
    else if (m.role === "assistant")
      messages.push({
        role: "assistant",
        content: m.text === "" && m.toolCalls.length > 0 ? null : m.text,
        ...(m.toolCalls.length > 0
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: names.toSafe(c.name), arguments: c.argsText || "{}" },
              })),
            }
          : {}),
      });
    // Chat completions has no error flag on tool results: the text itself says what failed.
    else messages.push({ role: "tool", tool_call_id: m.toolCallId, content: m.content });
  }
  return {
    model: config.model,
    messages,
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map((t) => ({
            type: "function",
            function: { name: names.toSafe(t.name), description: t.description, parameters: t.parameters },
          })),
        }
      : {}),
    max_tokens: request.maxTokens ?? config.maxTokens,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  };
}

const WireUsage = z.looseObject({
  prompt_tokens: z.number().optional(),
  completion_tokens: z.number().optional(),
});
const WireError = z.looseObject({ message: z.string().optional() });

const StreamChunk = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        index: z.number().optional(),
        delta: z
          .looseObject({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.looseObject({
                  index: z.number().optional(),
                  id: z.string().nullish(),
                  function: z
                    .looseObject({ name: z.string().nullish(), arguments: z.string().nullish() })
                    .nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: WireUsage.nullish(),
  error: WireError.nullish(),
});

const Completion = z.looseObject({
  choices: z.array(
    z.looseObject({
      message: z.looseObject({
        content: z.string().nullish(),
        tool_calls: z
          .array(
            z.looseObject({
              id: z.string().nullish(),
              function: z.looseObject({ name: z.string(), arguments: z.string().nullish() }),
            }),
          )
          .nullish(),
      }),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: WireUsage.nullish(),
});

const readStream: WireFormat["readStream"] = async (chunks, out, endpoint, redact) => {
  let finish: string | undefined;
  let done = false;
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  // The provider's call index → ours and the id it started with. They are equal unless a server
  // skips indexes, or streams parallel calls under one index told apart by id (Ollama does).
  const calls = new Map<number, { index: number; id: string }>();

  for await (const event of readSse(chunks)) {
    if (done) continue; // Read on to the end so the connection can be reused.
    if (event.data === "[DONE]") {
      done = true;
      continue;
    }
    const chunk = parse(StreamChunk, event.data, endpoint);
    if (chunk.error) {
      throw new AgentError(
        "LLM_HTTP",
        `${endpoint} reported an error mid-reply: ${redact(chunk.error.message ?? JSON.stringify(chunk.error))}`,
      );
    }
    if (chunk.usage) usage = toUsage(chunk.usage);
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) continue;
    if (choice.delta?.content) out.text(choice.delta.content);
    for (const [position, tc] of (choice.delta?.tool_calls ?? []).entries()) {
      const key = tc.index ?? position;
      let call = calls.get(key);
      // a new non-empty id on a known index is a new call, not more of the last one
      if (call === undefined || (tc.id && tc.id !== call.id)) {
        const id = tc.id || `call_${key}`;
        call = { index: out.startCall(id, tc.function?.name ?? ""), id };
        calls.set(key, call);
      }
      if (tc.function?.arguments) out.callDelta(call.index, tc.function.arguments);
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }

  // Some servers omit [DONE]; a finish reason is enough to know the reply is whole.
  if (!done && finish === undefined)
    throw new AgentError("LLM_STREAM_CUT", `the reply from ${endpoint} ended before it was complete`);
  return out.finish(stopReason(finish, out.hasCalls()), usage);
};

const readJson: WireFormat["readJson"] = async (chunks, out, endpoint) => {
  const completion = parse(Completion, await collect(chunks, endpoint), endpoint);
  const choice = completion.choices[0];
  if (!choice) throw new AgentError("LLM_BAD_RESPONSE", `${endpoint} answered a completion without choices`);
  if (choice.message.content) out.text(choice.message.content);
  for (const [i, tc] of (choice.message.tool_calls ?? []).entries()) {
    const index = out.startCall(tc.id || `call_${i}`, tc.function.name);
    out.callDelta(index, tc.function.arguments ?? "");
  }
  return out.finish(
    stopReason(choice.finish_reason ?? undefined, out.hasCalls()),
    completion.usage ? toUsage(completion.usage) : { inputTokens: 0, outputTokens: 0 },
  );
};

function stopReason(finish: string | undefined, hasCalls: boolean): StopReason {
  if (finish === "length") return "length";
  // Some servers (Ollama) say "stop" even when the reply is tool calls.
  if (finish === "tool_calls" || finish === "function_call" || hasCalls) return "tool_calls";
  return "stop";
}

function toUsage(u: z.infer<typeof WireUsage>): Usage {
  return { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0 };
}
