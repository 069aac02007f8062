import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createSseParser, readSse, type SseEvent } from "../../shared/sse.js";

function parseAll(pieces: string[]): { events: SseEvent[]; pending: boolean } {
  const parser = createSseParser();
  const events = pieces.flatMap((p) => parser.push(p));
  return { events, ...parser.end() };
}

describe("the SSE parser", () => {
  it("reads data events, named events and ids", () => {
    const { events } = parseAll(["data: one\n\nevent: ping\ndata: {}\n\nid: 7\ndata: two\n\n"]);
    expect(events).toEqual([
      { event: "message", data: "one" },
      { event: "ping", data: "{}" },
      { event: "message", data: "two", id: "7" },
    ]);
  });

  it("joins multi-line data with newlines and keeps a value without its one leading space", () => {
    const { events } = parseAll(["data:a\ndata:  b\ndata\n\n"]);
    expect(events).toEqual([{ event: "message", data: "a\n b\n" }]);
  });

  it("ignores comments and blank lines that carry no data", () => {
    const { events } = parseAll([": keep-alive\n\n\n\nevent: lonely\n\ndata: x\n\n"]);
    expect(events).toEqual([{ event: "message", data: "x" }]);
  });

  it("accepts CRLF, CR and LF line endings alike", () => {
    const lf = parseAll(["event: e\ndata: 1\n\ndata: 2\n\n"]).events;
    expect(parseAll(["event: e\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n"]).events).toEqual(lf);
    expect(parseAll(["event: e\rdata: 1\r\rdata: 2\r\r"]).events).toEqual(lf);
  });

  it("drops an event without its closing blank line, and says one was pending", () => {
    const { events, pending } = parseAll(["data: whole\n\ndata: half"]);
    expect(events).toEqual([{ event: "message", data: "whole" }]);
    expect(pending).toBe(true);
    expect(parseAll(["data: whole\n\n"]).pending).toBe(false);
  });

  it("strips a leading byte order mark", () => {
    expect(parseAll(["\ufeffdata: x\n\n"]).events).toEqual([{ event: "message", data: "x" }]);
  });

  it("gives the same events however the stream is split", () => {
    const stream =
      'event: message_start\r\ndata: {"a":1}\r\n\r\n: comment\rdata: x\rdata: y\r\r' +
      'data: {"text":"héllo wörld"}\n\nid: 3\nevent: end\ndata: [DONE]\n\n';
    const whole = parseAll([stream]).events;
    fc.assert(
      fc.property(fc.array(fc.nat(stream.length), { maxLength: 12 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const pieces: string[] = [];
        let from = 0;
        for (const p of points) {
          pieces.push(stream.slice(from, p));
          from = p;
        }
        pieces.push(stream.slice(from));
        expect(parseAll(pieces).events).toEqual(whole);
      }),
    );
  });

  it("decodes characters split across byte chunks", async () => {
    const bytes = new TextEncoder().encode('data: {"t":"€ and 🙂"}\n\n');
    async function* oneByteAtATime() {
      for (const b of bytes) yield Uint8Array.of(b);
    }
    const events: SseEvent[] = [];
    for await (const e of readSse(oneByteAtATime())) events.push(e);
    expect(events).toEqual([{ event: "message", data: '{"t":"€ and 🙂"}' }]);
  });
});
