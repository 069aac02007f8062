import { z } from "zod";
import { readSse } from "../../shared/sse.js";
import { AgentError } from "../errors.js";
import type { LlmConfig } from "../llm-config.js";
import { createWireProvider, type ProviderDeps, type WireFormat } from "./connection.js";
import type { ToolNameMap } from "./tool-names.js";
import type { ChatRequest, Provider, StopReason, Usage } from "./types.js";
import { check, collect, parse, parseJson } from "./wire.js";

export const ANTHROPIC_VERSION = "2023-06-01";

/** Anthropic messages: `POST {url}/v1/messages`. */
export function createAnthropicProvider(config: LlmConfig, deps: ProviderDeps = {}): Provider {
  return createWireProvider(config, deps, {
    api: "anthropic",
    path: "/v1/messages",
    headers: (c) => ({
      "anthropic-version": ANTHROPIC_VERSION,
      ...(c.key === undefined ? {} : { "x-api-key": c.key }),
    }),
    toWire,
    readJson,
    readStream,
  });
}

type Block = Record<string, unknown>;

function toWire(request: ChatRequest, names: ToolNameMap, config: LlmConfig, stream: boolean) {
  const messages: { role: "user" | "assistant"; content: Block[] }[] = [];
  // The API wants user and assistant turns to alternate: consecutive blocks of one role share a message.
  const push = (role: "user" | "assistant", blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const m of request.messages) {
    if (m.role === "user") push("user", m.content === "" ? [] : [{ type: "text", text: m.content }]);
    else if (m.role === "assistant")
      push("assistant", [
        ...(m.text === "" ? [] : [{ type: "text", text: m.text }]),
        ...m.toolCalls.map((c) => ({
          type: "tool_use",
          id: c.id,
          name: names.toSafe(c.name),
          input: toInput(c.argsText),
        })),
      ]);
    else
      push("user", [
        { type: "tool_result", tool_use_id: m.toolCallId, content: m.content, is_error: m.isError },
      ]);
  }
  return {
    model: config.model,
    max_tokens: request.maxTokens ?? config.maxTokens,
    ...(request.system === "" ? {} : { system: request.system }),
    messages,
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map((t) => ({
            name: names.toSafe(t.name),
            description: t.description,
            input_schema: t.parameters,
          })),
        }
      : {}),
    stream,
  };
}

/**
 * `tool_use.input` must be an object. A call whose arguments never parsed (cut off by the token
 * limit) goes back as `{}`; its tool result says what went wrong.
 */
function toInput(argsText: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(argsText);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const WireUsage = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});

const StreamEvent = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("message_start"), message: z.looseObject({ usage: WireUsage.nullish() }) }),
  z.looseObject({
    type: z.literal("content_block_start"),
    index: z.number(),
    content_block: z.looseObject({
      type: z.string(),
      id: z.string().nullish(),
      name: z.string().nullish(),
      text: z.string().nullish(),
      input: z.unknown().optional(),
    }),
  }),
  z.looseObject({
    type: z.literal("content_block_delta"),
    index: z.number(),
    delta: z.looseObject({
      type: z.string(),
      text: z.string().nullish(),
      partial_json: z.string().nullish(),
    }),
  }),
  z.looseObject({ type: z.literal("content_block_stop"), index: z.number() }),
  z.looseObject({
    type: z.literal("message_delta"),
    delta: z.looseObject({ stop_reason: z.string().nullish() }),
    usage: WireUsage.nullish(),
  }),
  z.looseObject({ type: z.literal("message_stop") }),
  z.looseObject({ type: z.literal("ping") }),
  z.looseObject({
    type: z.literal("error"),
    error: z.looseObject({ type: z.string().nullish(), message: z.string().nullish() }),
  }),
]);

const Message = z.looseObject({
  content: z.array(
    z.looseObject({
      type: z.string(),
      text: z.string().nullish(),
      id: z.string().nullish(),
      name: z.string().nullish(),
      input: z.unknown().optional(),
    }),
  ),
  stop_reason: z.string().nullish(),
  usage: WireUsage.nullish(),
});

const KNOWN_EVENTS = new Set([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "ping",
  "error",
]);

const readStream: WireFormat["readStream"] = async (chunks, out, endpoint, redact) => {
  let stop: string | undefined;
  let finished = false;
  let input = 0;
  let output = 0;
  // Content block index → our tool call index, for tool_use blocks; with their given input, if any.
  const calls = new Map<number, { index: number; input: unknown }>();

  for await (const sse of readSse(chunks)) {
    if (finished) continue; // Read on to the end so the connection can be reused.
    const json = parseJson(sse.data, endpoint);
    const type = (json as { type?: unknown } | null)?.type;
    if (typeof type !== "string" || !KNOWN_EVENTS.has(type)) continue; // New event kinds are ignored, as the API asks.
    const event = check(StreamEvent, json, endpoint);
    switch (event.type) {
      case "message_start":
        if (event.message.usage) {
          input = inputTokens(event.message.usage);
          output = event.message.usage.output_tokens ?? 0;
        }
        break;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "text" && block.text) out.text(block.text);
        else if (block.type === "tool_use")
          calls.set(event.index, {
            index: out.startCall(block.id || `toolu_${event.index}`, block.name ?? ""),
            input: block.input,
          });
        break;
      }
      case "content_block_delta": {
        const { delta } = event;
        if (delta.type === "text_delta" && delta.text) out.text(delta.text);
        else if (delta.type === "input_json_delta" && delta.partial_json) {
          const call = calls.get(event.index);
          if (call) out.callDelta(call.index, delta.partial_json);
        }
        break;
      }
      case "content_block_stop": {
        // A call with no argument deltas carries its (possibly empty) input whole in the start event.
        const call = calls.get(event.index);
        if (call && out.argsOf(call.index) === "")
          out.callDelta(call.index, JSON.stringify(call.input ?? {}));
        break;
      }
      case "message_delta":
        if (event.delta.stop_reason) stop = event.delta.stop_reason;
        if (event.usage) {
          if (event.usage.input_tokens != null) input = inputTokens(event.usage);
          if (event.usage.output_tokens != null) output = event.usage.output_tokens;
        }
        break;
      case "message_stop":
        finished = true;
        break;
      case "error":
        throw new AgentError(
          "LLM_HTTP",
          `${endpoint} reported an error mid-reply: ${redact(
            [event.error.type, event.error.message].filter(Boolean).join(": ") || "unknown error",
          )}`,
          { type: event.error.type },
        );
      case "ping":
        break;
    }
  }

  if (!finished && stop === undefined)
    throw new AgentError("LLM_STREAM_CUT", `the reply from ${endpoint} ended before it was complete`);
  return out.finish(stopReason(stop, out.hasCalls()), { inputTokens: input, outputTokens: output });
};

const readJson: WireFormat["readJson"] = async (chunks, out, endpoint) => {
  const message = parse(Message, await collect(chunks, endpoint), endpoint);
  for (const [i, block] of message.content.entries()) {
    if (block.type === "text" && block.text) out.text(block.text);
    else if (block.type === "tool_use") {
      const index = out.startCall(block.id || `toolu_${i}`, block.name ?? "");
      out.callDelta(index, JSON.stringify(block.input ?? {}));
    }
  }
  const usage: Usage = message.usage
    ? { inputTokens: inputTokens(message.usage), outputTokens: message.usage.output_tokens ?? 0 }
    : { inputTokens: 0, outputTokens: 0 };
  return out.finish(stopReason(message.stop_reason ?? undefined, out.hasCalls()), usage);
};

/** Cached prompt tokens are input too. */
function inputTokens(u: z.infer<typeof WireUsage>): number {
  return (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

function stopReason(stop: string | undefined, hasCalls: boolean): StopReason {
  if (stop === "max_tokens") return "length";
  if (stop === "tool_use" || hasCalls) return "tool_calls";
  return "stop";
}
