/**
 * One agent turn from the page: `POST /v1/agent/turn` with `Accept: text/event-stream`, its
 * server-sent events parsed as they arrive and handed over one by one. (EventSource cannot POST,
 * so the stream is read from fetch's body.)
 */
import type { Api } from "./api.js";

/** The events of a turn the page shows (server: agent/loop.ts AgentEvent), loosely typed. */
export type TurnEvent =
  | { type: "turn_start"; vid: string }
  | { type: "step"; step: number }
  | { type: "text_delta"; delta: string }
  | { type: "toolcall_start"; index: number; id: string; name: string }
  | { type: "toolcall_delta"; index: number; delta: string }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | { type: "tool_start"; id: string; name: string; args: unknown }
  | {
      type: "approval_pending";
      id: string;
      name: string;
      key: string;
      args: unknown;
      reason: string;
      diff?: string;
    }
  | {
      type: "tool_result";
      id: string;
      name: string;
      kind: string;
      isError: boolean;
      text: string;
      record?: string;
    }
  | { type: "turn_end"; result: TurnOutcome }
  | { type: "error"; code: string; message: string };

export interface TurnOutcome {
  vid: string;
  text: string;
  reason: string;
  steps: number;
  calls: Array<{ name: string; kind: string; isError: boolean; record?: string }>;
  usage: { inputTokens: number; outputTokens: number };
}

/**
 * Runs a turn and calls `onEvent` for each event in order. Rejects with the server's message when
 * it refuses the turn (an error status); a model failure during the turn arrives as an `error`
 * event before `turn_end`.
 */
export async function streamTurn(
  api: Api,
  body: { input: string; vid?: string },
  onEvent: (e: TurnEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const res = await api.request("/v1/agent/turn", {
    method: "POST",
    headers: { accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok || !res.body) {
    const text = await res.text();
    let message = text || `HTTP ${res.status}`;
    try {
      message = (JSON.parse(text) as { error: { message: string } }).error.message;
    } catch {
      // not an error body of ours: shown as it is
    }
    throw new Error(message);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseBlock(block);
      if (event) onEvent(event);
      end = buffer.indexOf("\n\n");
    }
  }
}

/** One SSE block (`event:` and `data:` lines) as a TurnEvent; comments and keep-alives give none. */
export function parseBlock(block: string): TurnEvent | undefined {
  let name = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return undefined;
  try {
    const parsed = JSON.parse(data.join("\n")) as Record<string, unknown>;
    return (name === "error" ? { ...parsed, type: "error" } : { type: name, ...parsed }) as TurnEvent;
  } catch {
    return undefined;
  }
}
