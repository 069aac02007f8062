/**
 * The page's one reader of server-sent events, for the watch and for an agent turn. Streams are
 * read from fetch (EventSource can neither send an Authorization header nor POST) and parsed by
 * the same parser as the Node clients (shared/sse.ts, which depends on nothing Node-only), so
 * every client of byteseek reads an event stream alike: CRLF, LF or CR line ends, a chunk split
 * anywhere, multi-line `data:`, the last `id:` kept for `Last-Event-ID`.
 */
import { readSse, type SseEvent } from "../../shared/sse.js";

export type { SseEvent };

/** The events of a response body as they arrive; the body is cancelled if the reader stops early. */
export function readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  return readSse(chunks(body));
}

async function* chunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
  }
}

/** An event's data as JSON; undefined when it is not JSON (such an event is skipped, not fatal). */
export function eventData(ev: SseEvent): unknown {
  try {
    return ev.data ? JSON.parse(ev.data) : undefined;
  } catch {
    return undefined;
  }
}
