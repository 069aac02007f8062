import type { FakeMessage, FakeRequest, FakeTool } from "./types.js";

type Obj = Record<string, unknown>;

/** Reads what a request carried into the fake's neutral shape. Lenient: it records what came. */
export function normaliseRequest(
  api: "openai" | "anthropic",
  path: string,
  headers: Record<string, string>,
  body: Obj,
  index: number,
  remotePort: number,
): FakeRequest {
  const rawMessages = Array.isArray(body.messages) ? (body.messages as Obj[]) : [];
  const rawTools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  const common = {
    index,
    api,
    path,
    remotePort,
    headers,
    body,
    stream: body.stream === true,
    model: String(body.model ?? ""),
    maxTokens: typeof body.max_tokens === "number" ? body.max_tokens : undefined,
  };
  if (api === "openai") {
    const system = rawMessages
      .filter((m) => m.role === "system" || m.role === "developer")
      .map((m) => textOf(m.content))
      .join("\n");
    return {
      ...common,
      system,
      tools: rawTools.map((t) => {
        const fn = (t.function ?? {}) as Obj;
        return {
          name: String(fn.name),
          description: String(fn.description ?? ""),
          parameters: fn.parameters,
        };
      }),
      messages: rawMessages.filter((m) => m.role !== "system" && m.role !== "developer").map(openAiMessage),
    };
  }
  return {
    ...common,
    system: textOf(body.system),
    tools: rawTools.map(
      (t): FakeTool => ({
        name: String(t.name),
        description: String(t.description ?? ""),
        parameters: t.input_schema,
      }),
    ),
    messages: rawMessages.flatMap(anthropicMessages),
  };
}

function openAiMessage(m: Obj): FakeMessage {
  if (m.role === "tool") return { role: "tool", toolCallId: String(m.tool_call_id), text: textOf(m.content) };
  if (m.role === "assistant") {
    const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Obj[]) : [];
    return {
      role: "assistant",
      text: textOf(m.content),
      toolCalls: calls.map((c) => {
        const fn = (c.function ?? {}) as Obj;
        return { id: String(c.id), name: String(fn.name), argsText: String(fn.arguments ?? "") };
      }),
    };
  }
  return { role: "user", text: textOf(m.content) };
}

function anthropicMessages(m: Obj): FakeMessage[] {
  const blocks: Obj[] =
    typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content as Obj[]);
  if (m.role === "assistant") {
    return [
      {
        role: "assistant",
        text: blocks
          .filter((b) => b.type === "text")
          .map((b) => String(b.text))
          .join(""),
        toolCalls: blocks
          .filter((b) => b.type === "tool_use")
          .map((b) => ({ id: String(b.id), name: String(b.name), argsText: JSON.stringify(b.input ?? {}) })),
      },
    ];
  }
  const out: FakeMessage[] = [];
  for (const b of blocks) {
    if (b.type === "tool_result")
      out.push({
        role: "tool",
        toolCallId: String(b.tool_use_id),
        text: textOf(b.content),
        isError: b.is_error === true,
      });
    else if (b.type === "text") out.push({ role: "user", text: String(b.text) });
  }
  return out;
}

/** A string, or the text parts of a content array joined. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((part: unknown) => ((part as Obj)?.type === "text" ? String((part as Obj).text) : ""))
      .join("");
  return "";
}
