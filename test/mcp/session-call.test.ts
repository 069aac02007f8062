import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionToolCall } from "../../mcp/fast-call.js";
import type { McpHttp } from "../../mcp/http.js";
import type { Tree } from "../../tree/types.js";
import { type McpTestServer, startMcpHttp, startMcpServer } from "./helpers.js";

const VERSION = "2025-06-18";
const KEY = "/byteseek/prompt/truncated";

function initializeBody(capabilities: Record<string, unknown> = {}) {
  return {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: VERSION, capabilities, clientInfo: { name: "sessions", version: "1" } },
  };
}

/** The headers the official 1.x client sends with a tools/call on its session (captured from it). */
function headersOn(session: string): Record<string, string> {
  return {
    host: "127.0.0.1:1",
    "mcp-session-id": session,
    "mcp-protocol-version": VERSION,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
}

function callBody(name: string, args: unknown, id: unknown = 7) {
  return { method: "tools/call", params: { name, arguments: args }, jsonrpc: "2.0", id };
}

/** The record's number differs between two calls; everything else must not. */
const sameRecord = (text: string) => text.replace(/(\/byteseek\/tool\/[^/"]+\/)\d+/g, "$1N");

describe("a tools/call on a 2025-era session, answered without the session's transport and instance", () => {
  let tree: Tree;
  let mcp: McpHttp;
  let closeAll: () => Promise<void>;

  beforeAll(async () => {
    ({ tree, mcp, close: closeAll } = await startMcpHttp("mcp-session"));
  });
  afterAll(() => closeAll());

  const post = (headers: Record<string, string>, vid?: string) =>
    new Request(`http://${headers.host}/mcp${vid ? `?vid=${vid}` : ""}`, { method: "POST", headers });

  /** A session opened as the 1.x client opens one (initialize, then initialized); its id. */
  async function openSession(vid?: string, capabilities: Record<string, unknown> = {}): Promise<string> {
    const base = { host: "127.0.0.1:1", "content-type": "application/json" };
    const init = await mcp.handle(
      post({ ...base, accept: "application/json, text/event-stream" }, vid),
      initializeBody(capabilities),
      vid,
    );
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get("mcp-session-id")!;
    const done = await mcp.handle(
      post(headersOn(session), vid),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      vid,
    );
    expect(done.status).toBe(202);
    return session;
  }

  const fast = (headers: Record<string, string>, body: unknown, abort = new AbortController()) =>
    mcp.sessionCall("POST", headers, body, abort);

  /** The SDK's answer to `body` on `session`, and the fast path's (undefined when it declines). */
  async function bothWays(session: string, body: unknown, headers = headersOn(session)) {
    const sdk = await mcp.handle(post(headers), body);
    const plain = fast(headers, body);
    return {
      sdk: {
        status: sdk.status,
        type: sdk.headers.get("content-type"),
        session: sdk.headers.get("mcp-session-id"),
        text: await sdk.text(),
      },
      plain: plain === undefined ? undefined : { session: plain.session, text: await plain.answer },
    };
  }

  it.each([
    ["a call that succeeds", "tree_get", { key: KEY }, 7],
    ["a call with a string id", "tree_get", { key: KEY }, "call-1"],
    ["a tool's failure (isError)", "tree_get", { key: "no key" }, 8],
    ["bad arguments", "tree_get", { nope: 1 }, 9],
    ["no arguments", "tree_get", undefined, 10],
    ["a tree name", "tree.get", { key: KEY }, 11],
    ["a name no tool has", "no_such_tool", {}, 12],
    ["byteseek_call", "byteseek_call", { name: "tree.get", args: { key: KEY } }, 13],
    ["byteseek_call without a name", "byteseek_call", {}, 14],
    ["byteseek_find", "byteseek_find", { query: "tree" }, 15],
    ["a tool needing approval (denied: the client cannot be asked)", "demo_confirmed", { key: KEY }, 16],
  ])("answers %s byte for byte as the SDK does, with the session's id", async (_what, name, args, id) => {
    const session = await openSession("same-bytes");
    const body =
      args === undefined
        ? { method: "tools/call", params: { name }, jsonrpc: "2.0", id }
        : callBody(name, args, id);
    const { sdk, plain } = await bothWays(session, body);
    expect(sdk.status).toBe(200);
    expect(sdk.type).toBe("application/json");
    expect(sdk.session).toBe(session);
    expect(plain).toBeDefined();
    expect(plain!.session).toBe(session);
    expect(sameRecord(plain!.text)).toBe(sameRecord(sdk.text));
  });

  it("records each call under the session's run (from initialize's ?vid=), as the SDK does", async () => {
    const session = await openSession("session-run");
    const answered = fast(headersOn(session), callBody("tree_get", { key: KEY }));
    const result = JSON.parse(await answered!.answer) as { result: { _meta: Record<string, unknown> } };
    expect(result.result._meta["byteseek/record"]).toBe("/byteseek/tool/session-run/0");
    const node = await tree.get("/byteseek/tool/session-run/0");
    expect(node?.kind === "json" && node.value.value).toMatchObject({ name: "tree.get", kind: "ok" });
    // And the SDK's next call on the same session takes the next number: one run, one sequence.
    const sdk = await mcp.handle(post(headersOn(session)), callBody("tree_get", { key: KEY }, 8));
    expect(await sdk.text()).toContain("/byteseek/tool/session-run/1");
  });

  it("records under the session's run mcp-<client name>-<n> when it was opened without a vid, as the SDK does", async () => {
    const session = await openSession();
    const answered = fast(headersOn(session), callBody("tree_get", { key: KEY }));
    const result = JSON.parse(await answered!.answer) as { result: { _meta: Record<string, unknown> } };
    const record = String(result.result._meta["byteseek/record"]);
    expect(record).toMatch(/^\/byteseek\/tool\/mcp-sessions-[0-9]+\/0$/);
    const sdk = await mcp.handle(post(headersOn(session)), callBody("tree_get", { key: KEY }, 8));
    // the same session's run, whichever path answers
    expect(await sdk.text()).toContain(`${record.slice(0, -2)}/1`);
  });

  it("takes only a plain tools/call the session would serve as it stands, and leaves the rest to the SDK", async () => {
    const session = await openSession("declines");
    const h = headersOn(session);
    const ok = callBody("tree_get", { key: KEY });
    expect(sessionToolCall("POST", h, ok, VERSION)).toBeDefined();
    const omit = (key: string) => {
      const { [key]: _gone, ...rest } = h;
      return rest;
    };
    const declined: Array<[string, Record<string, string>, unknown]> = [
      ["another method", h, { ...ok, method: "tools/list" }],
      ["a progress token (_meta)", h, { ...ok, params: { ...ok.params, _meta: { progressToken: 1 } } }],
      [
        "a 2026-era envelope",
        h,
        {
          ...ok,
          params: { ...ok.params, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
        },
      ],
      ["retry material", h, { ...ok, params: { ...ok.params, requestState: "x" } }],
      ["a key the request does not have", h, { ...ok, extra: 1 }],
      ["arguments that are not an object", h, callBody("tree_get", [1])],
      ["a name that is not a string", h, callBody(3 as unknown as string, {})],
      ["an id that is not a string or integer", h, callBody("tree_get", {}, null)],
      ["an id that is not an integer", h, callBody("tree_get", {}, 1.5)],
      ["a notification", h, { jsonrpc: "2.0", method: "tools/call", params: ok.params }],
      ["a batch", h, [ok]],
      ["no MCP-Protocol-Version header", omit("mcp-protocol-version"), ok],
      ["another protocol version than negotiated", { ...h, "mcp-protocol-version": "2025-03-26" }, ok],
      ["a modern protocol version", { ...h, "mcp-protocol-version": "2026-07-28" }, ok],
      ["an Accept without SSE", { ...h, accept: "application/json" }, ok],
      ["another content type", { ...h, "content-type": "text/plain" }, ok],
      ["no session id", omit("mcp-session-id"), ok],
      ["an unknown session", { ...h, "mcp-session-id": "no-such-session" }, ok],
    ];
    for (const [what, headers, body] of declined)
      expect(mcp.sessionCall("POST", headers, body, new AbortController()), what).toBeUndefined();
    expect(mcp.sessionCall("GET", h, ok, new AbortController()), "GET").toBeUndefined();
  });

  it("leaves a session whose client can be asked (answered on SSE streams) to the SDK", async () => {
    const session = await openSession("asking", { elicitation: {} });
    const { sdk, plain } = await bothWays(session, callBody("tree_get", { key: KEY }));
    expect(plain).toBeUndefined();
    expect(sdk.type).toBe("text/event-stream");
    expect(sdk.text).toContain('"isError":false');
  });

  it("leaves an id still running on the session to the SDK", async () => {
    const session = await openSession("same-id");
    const first = fast(headersOn(session), callBody("tree_get", { key: KEY }, 5));
    expect(first).toBeDefined();
    expect(fast(headersOn(session), callBody("tree_get", { key: KEY }, 5))).toBeUndefined();
    await first!.answer;
    expect(fast(headersOn(session), callBody("tree_get", { key: KEY }, 5))).toBeDefined();
  });

  it("aborts a call its client cancels (notifications/cancelled), as the SDK aborts its own", async () => {
    const session = await openSession("cancelled");
    const abort = new AbortController();
    const call = fast(headersOn(session), callBody("tree_get", { key: KEY }, 21), abort);
    const other = new AbortController();
    const sibling = fast(headersOn(session), callBody("tree_get", { key: KEY }, 22), other);
    const cancel = await mcp.handle(post(headersOn(session)), {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 21, reason: "the person stopped it" },
    });
    expect(cancel.status).toBe(202);
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe("the person stopped it");
    expect(other.signal.aborted).toBe(false);
    await Promise.all([call!.answer, sibling!.answer]);
  });

  it("aborts its running calls when the session ends, and then refuses the session as before (404)", async () => {
    const session = await openSession("ended");
    const abort = new AbortController();
    const call = fast(headersOn(session), callBody("tree_get", { key: KEY }, 31), abort);
    const end = await mcp.handle(
      new Request("http://127.0.0.1:1/mcp", { method: "DELETE", headers: headersOn(session) }),
      undefined,
    );
    expect(end.status).toBe(200);
    expect(abort.signal.aborted).toBe(true);
    await call!.answer;
    expect(fast(headersOn(session), callBody("tree_get", { key: KEY }, 32))).toBeUndefined();
    const gone = await mcp.handle(post(headersOn(session)), callBody("tree_get", { key: KEY }, 32));
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toMatch(/initialize again/);
  });
});

describe("a session's tools/call through the /mcp route", () => {
  let server: McpTestServer;
  beforeAll(async () => {
    server = await startMcpServer({ token: "s3cret" });
  });
  afterAll(() => server.close());

  const auth = { authorization: "Bearer s3cret" };
  const send = (body: unknown, headers: Record<string, string>, vid = "routed") =>
    fetch(`${server.url}/mcp?vid=${vid}`, { method: "POST", headers, body: JSON.stringify(body) });

  async function openSession(vid: string): Promise<string> {
    const init = await send(
      initializeBody(),
      { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      vid,
    );
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get("mcp-session-id")!;
    const { host: _host, ...h } = headersOn(session);
    expect(
      (await send({ jsonrpc: "2.0", method: "notifications/initialized" }, { ...auth, ...h })).status,
    ).toBe(202);
    return session;
  }

  /** Headers that differ between two answers by nature (time, the tree's revision, the body's length with the record number). */
  const VARYING = new Set(["date", "content-length", "x-byteseek-revision", "x-request-id"]);
  const headersOf = (res: Response) => [...res.headers].filter(([name]) => !VARYING.has(name));

  it("answers with the same status, headers and body as the SDK's path (taken without the version header)", async () => {
    const session = await openSession("routed-same");
    const { host: _host, ...h } = headersOn(session);
    const body = callBody("tree_get", { key: KEY });
    const quick = await send(body, { ...auth, ...h });
    const { "mcp-protocol-version": _v, ...bare } = h;
    const sdk = await send(body, { ...auth, ...bare });
    expect(quick.status).toBe(sdk.status);
    expect(headersOf(quick)).toEqual(headersOf(sdk));
    expect(quick.headers.get("mcp-session-id")).toBe(session);
    expect(sameRecord(await quick.text())).toBe(sameRecord(await sdk.text()));
  });

  it("answers a plain 2026-era call with the same headers as the SDK's path (taken for a progress token)", async () => {
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "routed", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const headers = {
      ...auth,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "tree_get",
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const body = (meta: Record<string, unknown>) => ({
      ...callBody("tree_get", { key: KEY }),
      params: { name: "tree_get", arguments: { key: KEY }, _meta: meta },
    });
    const quick = await send(body(envelope), headers, "routed-2026");
    const sdk = await send(body({ ...envelope, progressToken: 1 }), headers, "routed-2026");
    expect(quick.status).toBe(sdk.status);
    expect(headersOf(quick)).toEqual(headersOf(sdk));
    expect(sameRecord(await quick.text())).toBe(sameRecord(await sdk.text()));
  });

  it("still checks the token and the Origin first", async () => {
    const session = await openSession("routed-gate");
    const { host: _host, ...h } = headersOn(session);
    const body = callBody("tree_get", { key: KEY });
    const bare = await send(body, h);
    expect(bare.status).toBe(401);
    const foreign = await send(body, { ...auth, ...h, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    // Neither reached the tool: the session's run holds no record yet.
    expect(await server.tree.get("/byteseek/tool/routed-gate/0")).toBeUndefined();
    expect((await send(body, { ...auth, ...h })).status).toBe(200);
    expect(await server.tree.get("/byteseek/tool/routed-gate/0")).toBeDefined();
  });
});
