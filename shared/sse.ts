/**
 * Server-sent events (the WHATWG event-stream format), written and read in one module of no
 * dependencies (nothing of Node, nothing of byteseek), so every floor and the web page share it:
 * the server writes with `formatEvent` (server/sse.ts sends it), the HTTP tree client, the model
 * providers, the CLI and the page read with `readSse`. The parser: lines end in CRLF, LF or CR,
 * `data:` lines accumulate, a blank line dispatches, `:` lines are comments. It takes text in
 * pieces split anywhere, so network chunking never changes the events.
 */

/** One event in the text/event-stream format. `data` is JSON-encoded on one line. */
export function formatEvent(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface SseEvent {
  /** The `event:` field; "message" when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  id?: string;
}

export interface SseParser {
  /** Feeds a piece of the stream; returns the events it completed. */
  push(text: string): SseEvent[];
  /**
   * The stream ended. An event without its closing blank line is dropped, as the format says;
   * `pending` tells whether such a partial event was there (a cut stream).
   */
  end(): { pending: boolean };
}

export function createSseParser(): SseParser {
  let buffer = "";
  let started = false;
  let skipLf = false;
  let data: string[] = [];
  let event = "";
  let id: string | undefined;
  let sawField = false;

  function line(text: string, out: SseEvent[]): void {
    if (text === "") {
      if (data.length > 0)
        out.push({ event: event || "message", data: data.join("\n"), ...(id ? { id } : {}) });
      data = [];
      event = "";
      sawField = false;
      return;
    }
    sawField = true;
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id" && !value.includes("\0")) id = value;
  }

  return {
    push(text) {
      const out: SseEvent[] = [];
      if (!started && text.length > 0) {
        started = true;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      // A CR ending the previous piece already ended its line; an LF right after it is that line's ending too.
      if (skipLf && text.startsWith("\n")) text = text.slice(1);
      skipLf = false;
      buffer += text;
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        line(buffer.slice(start, i), out);
        if (c === 13) {
          if (i + 1 < buffer.length) {
            if (buffer.charCodeAt(i + 1) === 10) i++;
          } else skipLf = true;
        }
        start = i + 1;
      }
      buffer = buffer.slice(start);
      return out;
    },
    end() {
      const pending = buffer.length > 0 || data.length > 0 || sawField;
      buffer = "";
      data = [];
      return { pending };
    },
  };
}

/** Decodes a byte stream as UTF-8 (characters split across chunks intact) and yields its events. */
export async function* readSse(
  chunks: AsyncIterable<Uint8Array>,
  onEnd?: (state: { pending: boolean }) => void,
): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder("utf-8");
  const parser = createSseParser();
  for await (const chunk of chunks) {
    yield* parser.push(decoder.decode(chunk, { stream: true }));
  }
  yield* parser.push(decoder.decode());
  onEnd?.(parser.end());
}
