/**
 * One agent turn from the page: `POST /v1/agent/turn` with `Accept: text/event-stream`, its
 * server-sent events (./sse.ts) handed over one by one as they arrive.
 */
import type { Api } from "./api.js";
import { eventData, readEvents, type SseEvent } from "./sse.js";
import type { TurnStreamEvent } from "./wire.js";

/**
 * Runs a turn and calls `onEvent` for each event in order. Rejects with the server's message when
 * it refuses the turn (an error status); a model failure during the turn arrives as an `error`
 * event before `turn_end`.
 */
export async function streamTurn(
  api: Api,
  body: { input: string; vid?: string; llm?: { model: string } },
  onEvent: (e: TurnStreamEvent) => void,
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
  for await (const ev of readEvents(res.body)) {
    const event = turnEvent(ev);
    if (event) onEvent(event);
  }
}

/** A turn's event: `event:` names its type; an `error` event's data is the error body. */
function turnEvent(ev: SseEvent): TurnStreamEvent | undefined {
  const data = eventData(ev);
  if (!data || typeof data !== "object") return undefined;
  return (ev.event === "error" ? { ...data, type: "error" } : { type: ev.event, ...data }) as TurnStreamEvent;
}
