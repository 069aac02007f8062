import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainToolCall } from "../../mcp/fast-call.js";
import { createMcpHttp, type McpHttp } from "../../mcp/http.js";
import { PLAIN_CALL_CASES, sameRecord, startMcpHttp } from "./helpers.js";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "conformance", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** The headers the official 2.x client sends with a tools/call (captured from it). */
function headersFor(name: string): Record<string, string> {
  return {
    host: "127.0.0.1:1",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": name,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
}

function callBody(name: string, args: unknown, meta: Record<string, unknown> = ENVELOPE, id: unknown = 7) {
  return { method: "tools/call", params: { name, arguments: args, _meta: meta }, jsonrpc: "2.0", id };
}

let mcp: McpHttp;
let served: Awaited<ReturnType<typeof startMcpHttp>>;
let closeAll: () => Promise<void>;

beforeAll(async () => {
  served = await startMcpHttp("mcp-fast");
  ({ mcp, close: closeAll } = served);
});
afterAll(() => closeAll());

/** The body the SDK's handler answers `body` with, and the plain path's (or undefined when it declines). */
async function bothWays(headers: Record<string, string>, body: unknown, vid = "conf") {
  const request = new Request(`http://${headers.host}/mcp?vid=${vid}`, { method: "POST", headers });
  const sdk = await mcp.handle(request, body, vid);
  const plain = mcp.plainCall("POST", headers, body, vid, new AbortController().signal);
  return {
    sdk: { status: sdk.status, type: sdk.headers.get("content-type"), text: await sdk.text() },
    plain: plain === undefined ? undefined : await plain,
  };
}

describe("a 2026-era tools/call answered without an SDK instance", () => {
  it.each(PLAIN_CALL_CASES)("answers %s byte for byte as the SDK does", async (_what, name, args) => {
    const { sdk, plain } = await bothWays(headersFor(name), callBody(name, args));
    expect(sdk.status).toBe(200);
    expect(sdk.type).toBe("application/json");
    expect(plain).toBeDefined();
    expect(sameRecord(plain!)).toBe(sameRecord(sdk.text));
  });

  it("answers a client that can be asked with the same input-required result as the SDK", async () => {
    const meta = { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } };
    const body = callBody("demo_confirmed", { key: "/byteseek/prompt/truncated" }, meta, "s-1");
    const { sdk, plain } = await bothWays(headersFor("demo_confirmed"), body);
    const strip = (t: string) => t.replace(/"requestState":"[^"]+"/, '"requestState":"S"');
    expect(JSON.parse(sdk.text).result.resultType).toBe("input_required");
    expect(strip(plain!)).toBe(strip(sdk.text));
  });

  it("takes only the requests the SDK serves as they stand, and leaves the rest to it", () => {
    const name = "tree_get";
    const ok = callBody(name, { key: "/k" });
    expect(plainToolCall("POST", headersFor(name), ok)).toBeDefined();
    const declined: Array<[string, Record<string, string>, unknown]> = [
      [
        "another method",
        { ...headersFor(name), "mcp-method": "tools/list" },
        { ...ok, method: "tools/list" },
      ],
      ["a 2025-era call (no envelope)", headersFor(name), { ...ok, params: { name, arguments: {} } }],
      ["no MCP-Protocol-Version header", omit(headersFor(name), "mcp-protocol-version"), ok],
      ["no Mcp-Method header", omit(headersFor(name), "mcp-method"), ok],
      ["no Mcp-Name header", omit(headersFor(name), "mcp-name"), ok],
      ["an Mcp-Name that differs", { ...headersFor(name), "mcp-name": "tree_set" }, ok],
      ["an Accept without JSON", { ...headersFor(name), accept: "text/event-stream" }, ok],
      ["another content type", { ...headersFor(name), "content-type": "text/plain" }, ok],
      ["retry material", headersFor(name), { ...ok, params: { ...ok.params, requestState: "x" } }],
      ["a progress token", headersFor(name), callBody(name, {}, { ...ENVELOPE, progressToken: 1 })],
      [
        "a revision it does not serve",
        headersFor(name),
        callBody(name, {}, { ...ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2026-09-01" }),
      ],
      [
        "a malformed clientInfo",
        headersFor(name),
        callBody(name, {}, { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": { name: 1 } }),
      ],
      ["arguments that are not an object", headersFor(name), callBody(name, [1])],
      ["an id that is not a string or integer", headersFor(name), callBody(name, {}, ENVELOPE, null)],
      ["a batch", headersFor(name), [ok]],
    ];
    for (const [what, headers, body] of declined)
      expect(plainToolCall("POST", headers, body), what).toBeUndefined();
    expect(plainToolCall("GET", headersFor(name), ok)).toBeUndefined();
  });

  it("is off with BYTESEEK_FAST=0 (the reference lane): the SDK answers the plain call, as it answers with the lane on", async () => {
    const before = process.env.BYTESEEK_FAST;
    process.env.BYTESEEK_FAST = "0";
    let reference: McpHttp;
    try {
      reference = createMcpHttp({
        factory: served.factory,
        live: served.live,
        logger: pino({ level: "silent" }),
      });
    } finally {
      if (before === undefined) delete process.env.BYTESEEK_FAST;
      else process.env.BYTESEEK_FAST = before;
    }
    const [name, args] = ["tree_get", { key: "/byteseek/prompt/truncated" }] as const;
    const body = callBody(name, args);
    expect(
      reference.plainCall("POST", headersFor(name), body, "conf", new AbortController().signal),
    ).toBeUndefined();
    const request = new Request("http://127.0.0.1:1/mcp?vid=conf", {
      method: "POST",
      headers: headersFor(name),
    });
    const sdk = await reference.handle(request, body, "conf");
    const plain = await mcp.plainCall("POST", headersFor(name), body, "conf", new AbortController().signal);
    expect(sameRecord(await sdk.text())).toBe(sameRecord(plain!));
    await reference.close();
  });

  it("leaves a mismatched header to the SDK, which refuses it with its own error", async () => {
    const headers = { ...headersFor("tree_get"), "mcp-name": "tree_set" };
    const { sdk, plain } = await bothWays(headers, callBody("tree_get", { key: "/k" }));
    expect(plain).toBeUndefined();
    expect(sdk.status).toBe(400);
    expect(sdk.text).toMatch(/Mcp-Name/);
  });
});

function omit(h: Record<string, string>, key: string): Record<string, string> {
  const { [key]: _gone, ...rest } = h;
  return rest;
}
