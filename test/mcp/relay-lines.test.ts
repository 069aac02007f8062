/**
 * The relay's two lanes (cli/mcp-relay.ts): `sniffLine` reads ids off the SDKs' line shapes (the
 * fast lane), `parseLine` parses every line (the reference lane, BYTESEEK_FAST=0). Whatever a client
 * or a holder sends, both must see the same thing: the same kind, the same id.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseLine, type Seen, sniffLine } from "../../cli/mcp-relay.js";

const id = fc.oneof(
  fc.integer({ min: -1e15, max: 1e15 }),
  fc.stringMatching(/^[A-Za-z0-9_.:-]{1,64}$/),
  fc.string({ maxLength: 8 }),
  fc.constantFrom(null, 1.5, 1e21, true),
);
const method = fc.oneof(
  fc.constantFrom("tools/call", "initialize", "notifications/initialized", "subscriptions/listen"),
  fc.string({ maxLength: 12 }),
);
/** Values that look like the tail the fast lane reads, tucked inside strings and nested objects. */
const tricky = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  id.map((i) => `,"jsonrpc":"2.0","id":${JSON.stringify(i)}}`),
  id.map((i) => ({ inner: { jsonrpc: "2.0", id: i } })),
);

/** Lines as the SDKs write them (their member order) and in other orders and shapes. */
const line = fc.oneof(
  fc
    .record({ method, params: tricky, id })
    .map(({ method, params, id }) => JSON.stringify({ method, params, jsonrpc: "2.0", id })),
  fc.record({ method }).map(({ method }) => JSON.stringify({ method, jsonrpc: "2.0" })),
  fc.record({ result: tricky, id }).map(({ result, id }) => JSON.stringify({ result, jsonrpc: "2.0", id })),
  fc
    .record({ code: fc.integer(), id })
    .map(({ code, id }) => JSON.stringify({ jsonrpc: "2.0", id, error: { code, message: "m" } })),
  fc.record({ id, method, extra: tricky }).map((o) => JSON.stringify({ jsonrpc: "2.0", ...o })),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 40 }),
);

/** What the relay acts on: the kind and the id (the parsed message is a convenience it can do without). */
const seen = ({ kind, id }: Seen) => ({ kind, id });

describe("the relay's fast and reference lanes", () => {
  it("see every line a client or holder sends alike: the same kind and id", () => {
    fc.assert(
      fc.property(line, fc.constantFrom("client", "holder" as const), (text, from) => {
        expect(seen(sniffLine(text, from))).toEqual(seen(parseLine(text, from)));
      }),
      { numRuns: 1000 },
    );
  });

  it("read the SDKs' request and result lines off their ends", () => {
    const request =
      '{"method":"tools/call","params":{"name":"a","arguments":{"id":9}},"jsonrpc":"2.0","id":"r-1"}';
    const result = '{"result":{"content":[],"jsonrpc":"2.0","id":3},"jsonrpc":"2.0","id":12}';
    for (const classify of [sniffLine, parseLine]) {
      expect(seen(classify(request, "client"))).toEqual({ kind: "request", id: "r-1" });
      expect(seen(classify(result, "holder"))).toEqual({ kind: "response", id: 12 });
      expect(seen(classify('{"method":"notifications/initialized","jsonrpc":"2.0"}', "client"))).toEqual({
        kind: "initialized",
        id: undefined,
      });
    }
  });
});
