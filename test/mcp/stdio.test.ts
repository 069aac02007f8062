import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { acceptAgentTool } from "../../tools/catalogue/agent-tools.js";
import { openTree } from "../../tree/index.js";
import { eventually } from "../server/helpers.js";
import {
  asked,
  CONFIRMED_TOOL,
  closedAfterEach,
  connectV1Stdio,
  connectV2Stdio,
  declareOverHttp,
  type McpTestServer,
  mcpExit,
  startMcpServer,
  stdioFolders,
  textOf,
} from "./helpers.js";

const track = closedAfterEach();

describe("byteseek mcp on a store folder", () => {
  const folders = stdioFolders("mcp-stdio", { "dup.txt": "same\nother\nsame\n" });

  it("serves a 2025-era client: lists, calls, reports failures as isError, asks before a confirmed tool", async () => {
    let changed = 0;
    const client = track(
      await connectV1Stdio(folders.env, { elicit: "accept", onToolsChanged: () => changed++ }, [
        "--vid",
        "stdio-v1",
      ]),
    );
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["byteseek_find", "byteseek_call", "edit_read", "tree_set"]),
    );
    const ok = await client.callTool({ name: "edit_read", arguments: { path: "dup.txt" } });
    expect(ok.isError).toBe(false);
    expect((ok._meta as Record<string, unknown>)["byteseek/record"]).toBe("/byteseek/tool/stdio-v1/0");
    const ambiguous = await client.callTool({
      name: "edit_replace",
      arguments: { path: "dup.txt", old: "same", new: "x" },
    });
    expect(ambiguous.isError).toBe(true);
    const bad = await client.callTool({ name: "edit_read", arguments: {} });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("Signature: edit.read(");
    // A declaration written by a call (the same process's tree): the catalogue follows.
    const set = await client.callTool({
      name: "tree_set",
      arguments: { key: `/byteseek/tools/${CONFIRMED_TOOL.name}`, value: CONFIRMED_TOOL },
    });
    expect(set.isError).toBe(false);
    await eventually(() => changed > 0, "notifications/tools/list_changed");
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("demo_confirmed");
    const before = asked.length;
    const confirmed = await client.callTool({
      name: "demo_confirmed",
      arguments: { key: "/byteseek/prompt/system" },
    });
    expect(asked.length).toBe(before + 1);
    expect(confirmed.isError).toBe(false);
  });

  it("serves a 2026-era client: the same tools, and a no from the person is a denied result", async () => {
    // the tool was declared by the first session's run: a person accepts it for every run
    const tree = await openTree({ backend: "classic", location: folders.store });
    try {
      await acceptAgentTool(tree, CONFIRMED_TOOL.name, { by: "person (test)" });
    } finally {
      await tree.close();
    }
    const client = track(await connectV2Stdio(folders.env, { elicit: "decline", name: "stdio v2" }));
    expect(client.getProtocolEra()).toBe("modern");
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("demo_confirmed");
    const result = await client.callTool({
      name: "demo_confirmed",
      arguments: { key: "/byteseek/prompt/system" },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("declined");
    const ok = await client.callTool({ name: "tree_get", arguments: { key: "/byteseek/prompt/system" } });
    expect((ok._meta as Record<string, unknown>)["byteseek/record"]).toMatch(
      /^\/byteseek\/tool\/mcp-stdio-v2-\d+\//,
    );
  });

  it("records every call in the store the client named", async () => {
    const tree = await openTree({ backend: "classic", location: folders.store });
    try {
      const first = await tree.get("/byteseek/tool/stdio-v1/0");
      expect(first?.kind === "json" && (first.value.value as { name: string }).name).toBe("edit.read");
      const list = await tree.list("/byteseek/tool/stdio-v1/");
      expect(list.children.length).toBeGreaterThanOrEqual(6);
    } finally {
      await tree.close();
    }
  });
});

describe("byteseek mcp through a running server (KVSPACE=http://…)", () => {
  let server: McpTestServer;
  beforeAll(async () => {
    server = await startMcpServer({ token: "tok" });
  });
  afterAll(async () => {
    await server.close();
  });

  it("lists and calls through the server's runtime, and follows declarations another process writes", async () => {
    let changed = 0;
    const env = { KVSPACE: server.url, BYTESEEK_TOKEN: "tok" };
    const client = track(
      await connectV1Stdio(env, { onToolsChanged: () => changed++ }, ["--vid", "through"]),
    );
    const ok = await client.callTool({ name: "edit_read", arguments: { path: "dup.txt" } });
    expect(ok.isError).toBe(false);
    // The server's runtime made the call: the record is in the server's tree.
    const rec = await server.tree.get("/byteseek/tool/through/0");
    expect(rec?.kind === "json" && (rec.value.value as { name: string }).name).toBe("edit.read");
    await declareOverHttp(server.url, { ...CONFIRMED_TOOL, name: "text.peek", confirm: false }, "tok");
    await eventually(() => changed > 0, "notifications/tools/list_changed through the server's watch");
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("text_peek");
    const viaFacade = await client.callTool({
      name: "byteseek_call",
      arguments: { name: "text.peek", args: { key: "/byteseek/prompt/system" } },
    });
    expect(viaFacade.isError).toBe(false);
  });

  it("refuses to start without the server's token, saying why on stderr", async () => {
    const { code, stderr } = await mcpExit({ KVSPACE: server.url });
    expect(code).toBe(1);
    expect(stderr).toMatch(/401|token/i);
  });
});
