// Over 400 lines: the MCP HTTP transport end to end against one running server (both protocol versions); a split would start it once per file.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../server/helpers.js";
import {
  asked,
  CONFIRMED_TOOL,
  closedAfterEach,
  connectV1Http,
  connectV2Http,
  declareOverHttp,
  type McpTestServer,
  startMcpServer,
  textOf,
} from "./helpers.js";

const track = closedAfterEach();

/** A raw 2025-era JSON-RPC POST to `url`'s /mcp, on `session` when given. */
const postTo = (url: string, body: unknown, session?: string) =>
  fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(session ? { "mcp-session-id": session } : {}),
    },
    body: JSON.stringify(body),
  });

const record = async (s: McpTestServer, key: string) => {
  const node = await s.tree.get(key);
  return node?.kind === "json"
    ? (node.value.value as { name: string; kind: string; isError: boolean })
    : undefined;
};

describe.each([
  ["the 1.x SDK client (2025 era, sessions)", connectV1Http],
  ["the 2.x client (2026-07-28, stateless)", connectV2Http],
] as const)("MCP over Streamable HTTP with %s", (_label, connect) => {
  let server: McpTestServer;
  beforeAll(async () => {
    server = await startMcpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("lists the tree's tools under host-safe names with their schemas and annotations, facades first", async () => {
    const client = track(await connect(server.url));
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names.slice(0, 2)).toEqual(["byteseek_find", "byteseek_call"]);
    expect(names).toContain("edit_replace");
    expect(names).not.toContain("edit_grep"); // declared, off until enabled
    for (const n of names) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(names.slice(2)).toEqual([...names.slice(2)].sort());
    const read = tools.find((t) => t.name === "edit_read")!;
    expect(read.annotations?.readOnlyHint).toBe(true);
    expect(read.inputSchema.properties).toHaveProperty("path");
    expect(tools.find((t) => t.name === "tree_set")?.annotations?.destructiveHint).toBe(true);
  });

  it("calls a tool through the boundary and records it under the vid given by ?vid=", async () => {
    const vid = `http-ok-${connect.name}`;
    const client = track(await connect(server.url, { vid }));
    const result = await client.callTool({ name: "edit_read", arguments: { path: "dup.txt" } });
    expect(result.isError).toBe(false);
    expect(textOf(result)).toContain("other");
    expect((result._meta as Record<string, unknown>)["byteseek/record"]).toBe(`/byteseek/tool/${vid}/0`);
    expect(await record(server, `/byteseek/tool/${vid}/0`)).toMatchObject({ name: "edit.read", kind: "ok" });
  });

  it("answers an ambiguous edit_replace as isError, records it, and leaves the file unchanged", async () => {
    const vid = `http-amb-${connect.name}`;
    const client = track(await connect(server.url, { vid }));
    const result = await client.callTool({
      name: "edit_replace",
      arguments: { path: "dup.txt", old: "same", new: "changed" },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/2 times|twice|occurs/);
    expect(await readFile(join(server.workspace, "dup.txt"), "utf8")).toBe("same\nother\nsame\n");
    expect(await record(server, `/byteseek/tool/${vid}/0`)).toMatchObject({
      name: "edit.replace",
      isError: true,
    });
  });

  it("answers bad arguments as isError with the signature, and records the call as kind arg", async () => {
    const vid = `http-arg-${connect.name}`;
    const client = track(await connect(server.url, { vid }));
    const result = await client.callTool({ name: "tree_get", arguments: { kee: "/x" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Signature: tree.get(");
    expect(await record(server, `/byteseek/tool/${vid}/0`)).toMatchObject({ name: "tree.get", kind: "arg" });
  });

  it("records calls under the session's run mcp-<client>-<n> (a stateless 2026-era client: mcp-<client>) when no vid is given", async () => {
    const run = (n: number) =>
      connect.name === "connectV1Http"
        ? `mcp-named-client-${connect.name}-${n}`
        : `mcp-named-client-${connect.name}`;
    for (const n of [1, 2]) {
      const client = track(await connect(server.url, { name: `named client ${connect.name}` }));
      const result = await client.callTool({
        name: "tree_get",
        arguments: { key: "/byteseek/prompt/system" },
      });
      // each 2025-era session is a run of its own: a "this run" approval never spans two
      expect((result._meta as Record<string, unknown>)["byteseek/record"]).toBe(
        `/byteseek/tool/${run(n)}/${connect.name === "connectV1Http" ? 0 : n - 1}`,
      );
    }
    if (connect.name === "connectV1Http")
      expect(await record(server, "/vthread/mcp-named-client-connectV1Http-2/client")).toMatchObject({
        name: "named client connectV1Http",
        transport: "http",
      });
  });

  it("asks the person through elicitation and runs the call when they say yes", async () => {
    await declareOverHttp(server.url, CONFIRMED_TOOL);
    const vid = `http-yes-${connect.name}`;
    const client = track(await connect(server.url, { elicit: "accept", vid }));
    const before = asked.length;
    const result = await client.callTool({
      name: "demo_confirmed",
      arguments: { key: "/byteseek/prompt/system" },
    });
    expect(asked.length).toBe(before + 1);
    expect(asked.at(-1)).toContain("demo.confirmed");
    expect(result.isError).toBe(false);
    expect(textOf(result)).toContain("/byteseek/prompt/system");
    // The refusal pending the approval, then the approved call: both crossed the boundary.
    expect(await record(server, `/byteseek/tool/${vid}/0`)).toMatchObject({ kind: "denied" });
    expect(await record(server, `/byteseek/tool/${vid}/1`)).toMatchObject({
      kind: "ok",
      approval: `/byteseek/approval/${vid}/0`,
    });
    // The yes is kept in the tree like every other approval, and says who gave it.
    expect(await record(server, `/byteseek/approval/${vid}/0`)).toMatchObject({
      state: "approved",
      tool: "demo.confirmed",
      decision: { scope: "once", by: expect.stringMatching(/^person \(MCP host /) },
    });
  });

  it("answers denied, saying how to approve otherwise, when the person says no", async () => {
    await declareOverHttp(server.url, CONFIRMED_TOOL);
    const vid = `http-no-${connect.name}`;
    const client = track(await connect(server.url, { elicit: "decline", vid }));
    const result = await client.callTool({
      name: "demo_confirmed",
      arguments: { key: "/byteseek/prompt/system" },
    });
    expect(result.isError).toBe(true);
    expect((result._meta as Record<string, unknown>)["byteseek/kind"]).toBe("denied");
    expect(textOf(result)).toContain("--approve");
    expect(await record(server, `/byteseek/tool/${vid}/1`)).toBeUndefined();
  });

  it("answers denied without asking a client that cannot ask", async () => {
    await declareOverHttp(server.url, CONFIRMED_TOOL);
    const client = track(await connect(server.url, { vid: `http-noelicit-${connect.name}` }));
    const before = asked.length;
    const result = await client.callTool({
      name: "demo_confirmed",
      arguments: { key: "/byteseek/prompt/system" },
    });
    expect(asked.length).toBe(before);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("cannot ask");
  });

  it("offers system and the kept templates as prompts, and tree values as resources", async () => {
    await fetch(`${server.url}/v1/tree/byteseek/prompt/mcp/review`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "char/utf8", value: "Review {{path}} for {{focus}}." }),
    });
    await fetch(`${server.url}/v1/tree/byteseek/memory/editor`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "char/utf8", value: "vim" }),
    });
    const client = track(await connect(server.url, { vid: "prompted" }));
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["system", "review"]);
    expect(prompts[1]?.arguments?.map((a) => a.name)).toEqual(["path", "focus"]);
    const filled = await client.getPrompt({ name: "review", arguments: { path: "a.ts", focus: "bugs" } });
    expect(filled.messages[0]?.content).toMatchObject({ text: "Review a.ts for bugs." });
    const system = await client.getPrompt({ name: "system" });
    const direct = (await (await fetch(`${server.url}/v1/prompt?vid=prompted`)).json()) as { system: string };
    expect(system.messages[0]?.content).toMatchObject({ text: direct.system });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain("byteseek://tree/byteseek/memory/editor");
    const read = await client.readResource({ uri: "byteseek://tree/byteseek/memory/editor" });
    expect(read.contents[0]).toMatchObject({ text: "vim" });
    await expect(client.readResource({ uri: "byteseek://tree/byteseek/policy" })).rejects.toThrow(
      /not readable/,
    );
    await expect(client.readResource({ uri: "byteseek://tree/byteseek/llm/key" })).rejects.toThrow(
      /not readable/,
    );
  });

  it("takes any argument name in a template's placeholders, and refuses a prompt asked for without one", async () => {
    await fetch(`${server.url}/v1/tree/byteseek/prompt/mcp/greet`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        kind: "char/utf8",
        value: "Hello {{userName}}, see {{arg1}} in {{ file-path }}.",
      }),
    });
    const client = track(await connect(server.url, { vid: "prompted2" }));
    const greet = (await client.listPrompts()).prompts.find((p) => p.name === "greet");
    expect(greet?.arguments?.map((a) => [a.name, a.required])).toEqual([
      ["userName", true],
      ["arg1", true],
      ["file-path", true],
    ]);
    const filled = await client.getPrompt({
      name: "greet",
      arguments: { userName: "Ada", arg1: "notes", "file-path": "a.md" },
    });
    expect(filled.messages[0]?.content).toMatchObject({ text: "Hello Ada, see notes in a.md." });
    await expect(client.getPrompt({ name: "greet", arguments: { userName: "Ada" } })).rejects.toThrow(
      /arg1, file-path/,
    );
  });
});

describe("the live catalogue over Streamable HTTP", () => {
  let server: McpTestServer;
  beforeAll(async () => {
    server = await startMcpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("tells a 2025-era client of a declaration written over the tree API; it is callable directly and through byteseek_call", async () => {
    let changed = 0;
    const client = track(
      await connectV1Http(server.url, { vid: "live-v1", onToolsChanged: () => changed++ }),
    );
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("text_echo");
    await declareOverHttp(server.url, { ...CONFIRMED_TOOL, name: "text.echo", confirm: false });
    await eventually(() => changed > 0, "notifications/tools/list_changed");
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("text_echo");
    const direct = await client.callTool({
      name: "text_echo",
      arguments: { key: "/byteseek/prompt/system" },
    });
    expect(direct.isError).toBe(false);
    const facade = await client.callTool({
      name: "byteseek_call",
      arguments: { name: "text.echo", args: { key: "/byteseek/prompt/system" } },
    });
    expect(facade.isError).toBe(false);
    expect(await record(server, "/byteseek/tool/live-v1/1")).toMatchObject({ name: "text.echo", kind: "ok" });
    const found = await client.callTool({ name: "byteseek_find", arguments: { query: "echo" } });
    expect(textOf(found)).toContain('"name":"text.echo"');
  });

  it("maps a call's name by the tools as they are now: one written a moment ago is callable at once, and a removed one's name passes to the next in line", async () => {
    let changed = 0;
    const client = track(
      await connectV1Http(server.url, { vid: "names-v1", onToolsChanged: () => changed++ }),
    );
    const tool = (name: string) => ({ ...CONFIRMED_TOOL, name, confirm: false });
    const key = { key: "/byteseek/prompt/system" };
    // Both map to the MCP name demo_a_b: demo.a_b comes first in name order and holds it.
    await declareOverHttp(server.url, tool("demo.a_b"));
    await declareOverHttp(server.url, tool("demo_a.b"));
    expect((await client.callTool({ name: "demo_a_b", arguments: key })).isError).toBe(false);
    expect(await record(server, "/byteseek/tool/names-v1/0")).toMatchObject({ name: "demo.a_b", kind: "ok" });
    // Called before any notification could tell of it.
    await declareOverHttp(server.url, tool("demo.fresh"));
    expect((await client.callTool({ name: "demo_fresh", arguments: key })).isError).toBe(false);
    expect(await record(server, "/byteseek/tool/names-v1/1")).toMatchObject({
      name: "demo.fresh",
      kind: "ok",
    });
    changed = 0;
    const del = await fetch(`${server.url}/v1/tree/byteseek/tools/demo.a_b`, { method: "DELETE" });
    expect(del.status).toBe(200);
    await eventually(() => changed > 0, "notifications/tools/list_changed");
    expect((await client.callTool({ name: "demo_a_b", arguments: key })).isError).toBe(false);
    expect(await record(server, "/byteseek/tool/names-v1/2")).toMatchObject({ name: "demo_a.b", kind: "ok" });
  });

  it("tells a 2025-era client subscribed to a resource when its key is written", async () => {
    const client = track(await connectV1Http(server.url, { vid: "live-res" }));
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
      updated.push(n.params.uri);
    });
    const uri = "byteseek://tree/byteseek/memory/lang";
    await client.subscribeResource({ uri });
    const put = (value: string) =>
      fetch(`${server.url}/v1/tree/byteseek/memory/${value === "x" ? "other" : "lang"}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind: "char/utf8", value }),
      });
    await put("x");
    await put("typescript");
    await eventually(() => updated.length > 0, "notifications/resources/updated");
    expect(updated).toEqual([uri]);
    expect((await client.readResource({ uri })).contents[0]).toMatchObject({ text: "typescript" });
  });

  it("sends a 2025-era session's GET stream its headers at once, before any event, then its notifications on it", async () => {
    const post = (body: unknown, session?: string) => postTo(server.url, body, session);
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    const session = init.headers.get("mcp-session-id")!;
    await init.text();
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)).status).toBe(202);
    const ac = new AbortController();
    try {
      // fetch resolves on the response's headers: nothing is written on the stream until a change
      // below, so before the fix it never resolved (the guard only keeps a hang from lasting)
      const opened = fetch(`${server.url}/mcp`, {
        headers: {
          accept: "text/event-stream",
          "mcp-protocol-version": "2025-06-18",
          "mcp-session-id": session,
        },
        signal: ac.signal,
      });
      let guard: NodeJS.Timeout | undefined;
      const stream = await Promise.race([
        opened,
        new Promise<never>((_, reject) => {
          guard = setTimeout(() => reject(new Error("no response headers on the GET stream")), 10_000);
        }),
      ]).finally(() => clearTimeout(guard));
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(stream.headers.get("mcp-session-id")).toBe(session);
      expect(stream.headers.get("x-request-id")).toBeTruthy(); // the app's headers came with them
      expect(stream.headers.get("x-accel-buffering")).toBe("no");
      await declareOverHttp(server.url, { ...CONFIRMED_TOOL, name: "text.early", confirm: false });
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("notifications/tools/list_changed")) {
        const { done, value } = await reader.read();
        if (done) break;
        text += value;
      }
      expect(text).toContain("notifications/tools/list_changed");
    } finally {
      ac.abort();
      await fetch(`${server.url}/mcp`, { method: "DELETE", headers: { "mcp-session-id": session } });
    }
  });

  it("tells a 2026-era client on its listen stream when the policy changes", async () => {
    let changed = 0;
    const client = track(await connectV2Http(server.url, { onToolsChanged: () => changed++ }));
    const sub = await client.listen({ toolsListChanged: true });
    expect(sub.honoredFilter.toolsListChanged).toBe(true);
    const put = await fetch(`${server.url}/v1/tree/byteseek/policy?force=1`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "json", value: { confirm: ["tree.list"] }, ro: true }),
    });
    expect(put.status).toBe(200);
    await eventually(() => changed > 0, "notifications/tools/list_changed on the listen stream");
    await sub.close();
  });
});

describe("the /mcp endpoint's gate", () => {
  it("refuses a request without the token when one is set, and serves one that carries it", async () => {
    const server = await startMcpServer({ token: "s3cret" });
    try {
      const bare = await fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(bare.status).toBe(401);
      await expect(connectV1Http(server.url)).rejects.toThrow();
      const client = track(await connectV1Http(server.url, { token: "s3cret" }));
      expect((await client.listTools()).tools.length).toBeGreaterThan(2);
      const v2 = track(await connectV2Http(server.url, { token: "s3cret" }));
      expect((await v2.listTools()).tools.length).toBeGreaterThan(2);
    } finally {
      await track.closeAll();
      await server.close();
    }
  });

  it("refuses a request carrying a foreign Origin", async () => {
    const server = await startMcpServer();
    try {
      const res = await fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          origin: "https://evil.example",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "x", version: "1" },
          },
        }),
      });
      expect(res.status).toBe(403);
      // The server's own origin (its web page) is let through.
      const own = await connectV1Http(server.url, { headers: { origin: server.url } });
      expect((await own.listTools()).tools.length).toBeGreaterThan(2);
      await own.close();
    } finally {
      await server.close();
    }
  });

  it("answers malformed MCP requests with a 4xx and an error body, never a 500", async () => {
    const server = await startMcpServer();
    try {
      const cases: Array<[string, string | undefined, Record<string, string>]> = [
        ["POST", "{}", { "content-type": "application/json" }],
        ["POST", "[]", { "content-type": "application/json" }],
        ["POST", "{bad", { "content-type": "application/json" }],
        ["POST", "hello", { "content-type": "text/plain" }],
        [
          "POST",
          JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          { "content-type": "application/json" },
        ],
        ["GET", undefined, { "mcp-session-id": "no-such-session" }],
        ["DELETE", undefined, {}],
      ];
      for (const [method, body, headers] of cases) {
        const res = await fetch(`${server.url}/mcp`, {
          method,
          ...(body === undefined ? {} : { body }),
          headers: { accept: "application/json, text/event-stream", ...headers },
        });
        expect(res.status, `${method} ${body}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${method} ${body}`).toBeLessThan(500);
        expect(await res.json()).toHaveProperty("error");
      }
    } finally {
      await server.close();
    }
  });

  it("answers a method Streamable HTTP does not use with 405, naming the ones it does", async () => {
    const server = await startMcpServer();
    try {
      for (const method of ["PUT", "PATCH"]) {
        const res = await fetch(`${server.url}/mcp`, {
          method,
          headers: { "content-type": "text/plain" },
          body: "x",
        });
        expect(res.status, method).toBe(405);
        expect(res.headers.get("allow"), method).toBe("GET, POST, DELETE");
        const body = (await res.json()) as { error: { code: string; message: string } };
        expect(body.error.code).toBe("HTTP_METHOD_NOT_ALLOWED");
        expect(body.error.message).toMatch(/POST/);
      }
    } finally {
      await server.close();
    }
  });

  it("refuses a malformed vid with a 400 and an error body", async () => {
    const server = await startMcpServer();
    try {
      const res = await fetch(`${server.url}/mcp?vid=${encodeURIComponent("../x")}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("HTTP_BAD_REQUEST");
      expect(body.error.message).toMatch(/vid/);
    } finally {
      await server.close();
    }
  });
});

describe("2025-era sessions without DELETE", () => {
  const IDLE_MS = 300;
  let server: McpTestServer;
  beforeAll(async () => {
    server = await startMcpServer({ mcpSessionIdleMs: IDLE_MS });
  });
  afterAll(async () => {
    await server.close();
  });

  const post = (body: unknown, session?: string) => postTo(server.url, body, session);

  it("answers a client that cannot be asked with one JSON body per request, and streams to one that can (it may be asked mid-call)", async () => {
    // a server of its own, without the short idle bound: on a loaded machine the call may come
    // more than IDLE_MS after the initialize, and the session would be gone
    const relaxed = await startMcpServer();
    const post = (body: unknown, session?: string) => postTo(relaxed.url, body, session);
    const initialize = (capabilities: Record<string, unknown>) =>
      post({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities, clientInfo: { name: "raw", version: "1" } },
      });
    const plain = await initialize({});
    expect(plain.headers.get("content-type")).toMatch(/^application\/json/);
    expect(
      ((await plain.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name,
    ).toBe("byteseek");
    const session = plain.headers.get("mcp-session-id")!;
    await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
    const call = await post(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "tree_get", arguments: { key: "/byteseek/prompt/system" } },
      },
      session,
    );
    expect(call.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await call.json()) as { result: { isError: boolean } }).result.isError).toBe(false);
    const asking = await initialize({ elicitation: {} });
    expect(asking.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await asking.text();
    await relaxed.close();
  });

  it("closes a session left idle beyond the bound: its id then answers 404, saying to initialize again", async () => {
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    expect(init.status).toBe(200);
    const session = init.headers.get("mcp-session-id");
    expect(session).toBeTruthy();
    await init.text();
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session!)).status).toBe(202);
    const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, session!);
    expect(list.status).toBe(200);
    expect(await list.text()).toContain("byteseek_find");
    // Nothing open on it now: it ends once idle, without a DELETE. (Each look is a request, which
    // makes it busy again: so look only after twice the bound of quiet.)
    let gone: Response | undefined;
    await eventually(async () => {
      await new Promise((res) => setTimeout(res, IDLE_MS * 2));
      gone = await post({ jsonrpc: "2.0", id: 3, method: "tools/list" }, session!);
      if (gone.status === 200) await gone.text();
      return gone.status === 404;
    }, "the idle session closed");
    expect(((await gone!.json()) as { error: { message: string } }).error.message).toMatch(
      /initialize again/,
    );
  });

  it("keeps a session whose client listens on its GET stream, however long it is quiet", async () => {
    const client = await connectV1Http(server.url, { vid: "idle-listening" });
    try {
      await new Promise((res) => setTimeout(res, IDLE_MS * 4));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("tree_get");
    } finally {
      await client.close();
    }
  });
});
