/**
 * MCP resources and prompts are read under the run's grant, exactly as `tree.get` is (the run's
 * `tree` prefixes, denyKeys), and a registry entry's secret fields read masked wherever a run reads
 * them — against a real byteseek server and the SDK's client over Streamable HTTP.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPolicy } from "../../tools/gate/policy.js";
import { cliEnv } from "../cli/cli-server.js";
import { assertBuilt, runCli } from "../cli/run-cli.js";
import { setPolicy } from "../tools/helpers.js";
import { connectV1Http, type McpTestServer, startMcpServer } from "./helpers.js";

const SECRET = "Bearer upstream-s3cret";

describe("MCP resources and prompts under the run's grant", () => {
  let server: McpTestServer;
  const clients: Client[] = [];
  async function connect(vid: string): Promise<Client> {
    const client = await connectV1Http(server.url, { vid });
    clients.push(client);
    return client;
  }
  async function put(key: string, body: unknown): Promise<void> {
    const res = await fetch(`${server.url}/v1/tree${key}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
  }

  beforeAll(async () => {
    server = await startMcpServer();
    const policy = defaultPolicy();
    await setPolicy(server.tree, {
      ...policy,
      denyKeys: [...policy.denyKeys, "/byteseek/memory/private/"],
      grants: { ...policy.grants, runs: [{ vid: "narrow", grant: { tree: ["/notes/"] } }] },
    });
    await put("/byteseek/mcp/gh", {
      kind: "json",
      value: { url: "https://example.invalid/mcp", headers: { Authorization: SECRET }, enabled: false },
    });
    await put("/byteseek/memory/editor", { kind: "char/utf8", value: "vim" });
    await put("/byteseek/memory/private/pin", { kind: "char/utf8", value: "1234" });
    await put("/byteseek/prompt/mcp/review", { kind: "char/utf8", value: "Review {{path}}." });
    await put("/notes/today", { kind: "char/utf8", value: "ship it" });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.close();
  });

  it("refuses a run with a narrow tree grant every resource outside it, the registry's headers first", async () => {
    const client = await connect("narrow");
    await expect(client.readResource({ uri: "byteseek://tree/byteseek/mcp/gh" })).rejects.toThrow(
      /not readable: run narrow does not hold the power "tree" on \/byteseek\/mcp\/gh/,
    );
    await expect(client.readResource({ uri: "byteseek://tree/byteseek/mcp/" })).rejects.toThrow(
      /not readable/,
    );
    await expect(client.readResource({ uri: "byteseek://tree/byteseek/memory/editor" })).rejects.toThrow(
      /not readable/,
    );
    expect((await client.listResources()).resources).toEqual([]);
    const read = await client.readResource({ uri: "byteseek://tree/notes/today" });
    expect(read.contents[0]).toMatchObject({ text: "ship it" });
    // and tree.get answers the same
    const viaTool = await client.callTool({ name: "tree_get", arguments: { key: "/byteseek/mcp/gh" } });
    expect(viaTool.isError).toBe(true);
  });

  it("offers a narrow run no prompt template outside its grant, and refuses getting one", async () => {
    const client = await connect("narrow");
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["system"]);
    await expect(client.getPrompt({ name: "review", arguments: { path: "a.ts" } })).rejects.toThrow(
      /not readable/,
    );
    const wide = await connect("wide");
    expect((await wide.listPrompts()).prompts.map((p) => p.name)).toEqual(["system", "review"]);
  });

  it("subscribes a run only to a byteseek resource it may read, each refusal saying why", async () => {
    const client = await connect("narrow");
    await expect(client.subscribeResource({ uri: "byteseek://tree/byteseek/mcp/gh" })).rejects.toThrow(
      /not readable: run narrow does not hold the power "tree"/,
    );
    await expect(client.subscribeResource({ uri: "https://example.invalid/x" })).rejects.toThrow(
      /not a byteseek resource/,
    );
    await expect(client.subscribeResource({ uri: "byteseek://tree/notes/a//b" })).rejects.toThrow(
      /names no valid key/,
    );
    await expect(client.subscribeResource({ uri: "byteseek://tree/notes/today" })).resolves.toEqual({});
    // a key not written yet may be subscribed to: its creation is told
    await expect(client.subscribeResource({ uri: "byteseek://tree/notes/tomorrow" })).resolves.toEqual({});
    const wide = await connect("wide");
    await expect(
      wide.subscribeResource({ uri: "byteseek://tree/byteseek/memory/private/pin" }),
    ).rejects.toThrow(/denyKeys/);
  });

  it("answers a cursor byteseek never gave with invalid params (-32602), on every list", async () => {
    const client = await connect("wide");
    const invalid = { code: -32602, message: expect.stringContaining("not one byteseek gave") };
    await expect(client.listResources({ cursor: "a/b/c" })).rejects.toMatchObject(invalid);
    await expect(client.listResources({ cursor: "\u0001" })).rejects.toMatchObject(invalid);
    await expect(client.listTools({ cursor: "page-2" })).rejects.toMatchObject(invalid);
    await expect(client.listPrompts({ cursor: "page-2" })).rejects.toMatchObject(invalid);
    await expect(client.listResourceTemplates({ cursor: "x" })).rejects.toMatchObject(invalid);
    // a cursor that is a name it could have given pages on
    expect((await client.listResources({ cursor: "editor" })).resources).toEqual([]);
  });

  it("keeps denyKeys out of resources/list and resources/read for every run", async () => {
    const client = await connect("wide");
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris).toContain("byteseek://tree/byteseek/memory/editor");
    expect(uris.some((u) => u.includes("private"))).toBe(false);
    await expect(client.readResource({ uri: "byteseek://tree/byteseek/memory/private/pin" })).rejects.toThrow(
      /denyKeys/,
    );
  });

  it("masks a registry entry's secret fields for a run through resources, tree.get and tree.list, names kept", async () => {
    const client = await connect("wide");
    const read = await client.readResource({ uri: "byteseek://tree/byteseek/mcp/gh" });
    const text = String((read.contents[0] as { text?: string }).text);
    expect(text).not.toContain("s3cret");
    expect(JSON.parse(text)).toMatchObject({ headers: { Authorization: "***" } });
    const got = await client.callTool({ name: "tree_get", arguments: { key: "/byteseek/mcp/gh" } });
    const gotText = JSON.stringify(got.content);
    expect(gotText).toContain("Authorization");
    expect(gotText).not.toContain("s3cret");
    const listed = await client.callTool({ name: "tree_list", arguments: { key: "/byteseek/mcp/" } });
    expect(JSON.stringify(listed.content)).toContain("gh");
    expect(JSON.stringify(listed.content)).not.toContain("s3cret");
    // the person still reads it whole
    const person = (await (await fetch(`${server.url}/v1/tree/byteseek/mcp/gh`)).json()) as {
      value: { headers: Record<string, string> };
    };
    expect(person.value.headers.Authorization).toBe(SECRET);
  });

  it("masks the secret fields in exports unless the person asks for them (GET /v1/export, kvspace export)", async () => {
    const masked = await (await fetch(`${server.url}/v1/export/byteseek/mcp/`)).text();
    expect(masked).toContain('"Authorization":"***"');
    expect(masked).not.toContain("s3cret");
    const whole = await (await fetch(`${server.url}/v1/export/byteseek/mcp/?secrets=1`)).text();
    expect(whole).toContain(SECRET);
    assertBuilt();
    const env = cliEnv(server.url);
    const cli = await runCli(["export", "/byteseek/mcp/"], { env });
    expect(cli).toMatchObject({ code: 0, stderr: "" });
    expect(cli.stdout).toContain('"Authorization":"***"');
    expect(cli.stdout).not.toContain("s3cret");
    const withSecrets = await runCli(["export", "/byteseek/mcp/", "--secrets"], { env });
    expect(withSecrets.stdout).toContain(SECRET);
  });
});
