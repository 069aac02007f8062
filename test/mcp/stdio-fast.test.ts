/**
 * A stdio connection pinned to 2026-07-28 answers its plain `tools/call`s beside the SDK
 * (mcp/stdio.ts): the same bytes as the SDK's instance writes, for every kind of outcome.
 * In-process: the official 2.x client over a pair of streams, the same factory and store.
 */
import { PassThrough } from "node:stream";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notifyInstances } from "../../mcp/notify.js";
import { keyToUri } from "../../mcp/resources.js";
import type { McpFactory, McpInstance } from "../../mcp/server.js";
import { serveConnection } from "../../mcp/stdio.js";
import { eventually } from "../server/helpers.js";
import { PLAIN_CALL_CASES, sameRecord, startMcpHttp } from "./helpers.js";

let factory: McpFactory;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ factory, close } = await startMcpHttp("stdio-fast"));
});
afterAll(() => close());

/** A 2.x client on a connection served in-process; `lines` is every line the server wrote. */
async function connection(plainCalls: boolean, elicit = false) {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const lines: string[] = [];
  let rest = "";
  toClient.on("data", (d: Buffer) => {
    const parts = (rest + d.toString()).split("\n");
    rest = parts.pop() ?? "";
    lines.push(...parts);
  });
  let fastCalls = 0;
  const instances: McpInstance[] = [];
  // Only the plain path goes through the factory's answerPlain: this counts it.
  const counted: McpFactory = {
    ...factory,
    answerPlain: (...args) => {
      fastCalls++;
      return factory.answerPlain(...args);
    },
  };
  const handle = serveConnection({
    factory: counted,
    logger: pino({ level: "silent" }),
    input: toServer,
    output: toClient,
    vid: "conf",
    onInstance(instance) {
      instances.push(instance);
    },
    plainCalls,
  });
  const client = new ClientV2(
    { name: "conformance", version: "1" },
    {
      capabilities: elicit ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  await client.connect(new StdioServerTransport(toClient, toServer));
  return {
    client,
    lines,
    fastCalls: () => fastCalls,
    instances,
    async close() {
      await client.close();
      await handle.close();
    },
  };
}

describe("a stdio connection on 2026-07-28 answering tools/call beside the SDK", () => {
  it.each(PLAIN_CALL_CASES)("answers %s byte for byte as the SDK does", async (_what, name, args) => {
    const fast = await connection(true);
    const sdk = await connection(false);
    try {
      for (const c of [fast, sdk]) await c.client.callTool({ name, arguments: args });
      expect(fast.fastCalls()).toBe(1);
      expect(sdk.fastCalls()).toBe(0);
      const answer = (lines: string[]) => sameRecord(lines.at(-1) ?? "");
      expect(answer(fast.lines)).toBe(answer(sdk.lines));
      expect(JSON.parse(fast.lines.at(-1) ?? "{}").result).toBeDefined();
    } finally {
      await fast.close();
      await sdk.close();
    }
  });

  it("answers a client that can be asked with the SDK's input-required result, and runs the call once it says yes", async () => {
    const fast = await connection(true, true);
    const sdk = await connection(false, true);
    try {
      for (const c of [fast, sdk])
        c.client.setRequestHandler("elicitation/create", async () => ({
          action: "accept",
          content: { approve: true },
        }));
      const results = [];
      for (const c of [fast, sdk])
        results.push(
          await c.client.callTool({
            name: "demo_confirmed",
            arguments: { key: "/byteseek/prompt/truncated" },
          }),
        );
      const strip = (t: string) => sameRecord(t).replace(/"requestState":"[^"]+"/, '"requestState":"S"');
      const asked = (lines: string[]) => lines.find((l) => l.includes('"input_required"')) ?? "";
      expect(asked(fast.lines)).not.toBe("");
      expect(strip(asked(fast.lines))).toBe(strip(asked(sdk.lines)));
      // The retry carries the answer (inputResponses): the SDK serves it, on both connections.
      expect(results.map((r) => r.isError)).toEqual([results[1]?.isError, results[1]?.isError]);
      expect(strip(fast.lines.at(-1) ?? "")).toBe(strip(sdk.lines.at(-1) ?? ""));
    } finally {
      await fast.close();
      await sdk.close();
    }
  });

  it("leaves every message of a 2025-era connection to the SDK", async () => {
    const { Client: ClientV1 } = await import("@modelcontextprotocol/sdk/client/index.js");
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    let fastCalls = 0;
    const handle = serveConnection({
      factory: {
        ...factory,
        answerPlain: (...args) => {
          fastCalls++;
          return factory.answerPlain(...args);
        },
      },
      logger: pino({ level: "silent" }),
      input: toServer,
      output: toClient,
      vid: "conf",
      onInstance() {},
    });
    const client = new ClientV1({ name: "v1", version: "1" });
    await client.connect(new StdioServerTransport(toClient, toServer));
    try {
      const r = await client.callTool({ name: "tree_get", arguments: { key: "/byteseek/prompt/truncated" } });
      expect(r.isError).toBe(false);
      expect(fastCalls).toBe(0);
    } finally {
      await client.close();
      await handle.close();
    }
  });
});

describe("change notifications on a 2026-era stdio connection", () => {
  it("go to what its listen streams ask for, and stop being made once they end", async () => {
    const c = await connection(true);
    try {
      const got: Array<{ method: string; uri?: string }> = [];
      c.client.setNotificationHandler("notifications/tools/list_changed", async () => {
        got.push({ method: "tools" });
      });
      c.client.setNotificationHandler("notifications/resources/updated", async (n) => {
        got.push({ method: "resource", uri: n.params.uri });
      });
      // The connection is pinned by its first request.
      await c.client.callTool({ name: "tree_get", arguments: { key: "/byteseek/prompt/truncated" } });
      const [instance] = c.instances;
      expect(instance?.listening?.wants("tools")).toBe(false);
      const change = { tools: true, prompts: false, resources: false, keys: ["/a", "/b"] };
      const sub = await c.client.listen({ toolsListChanged: true, resourceSubscriptions: [keyToUri("/a")] });
      expect(instance?.listening?.wants("tools")).toBe(true);
      expect(instance?.listening?.wantsUri(keyToUri("/b"))).toBe(false);
      notifyInstances(c.instances, change);
      await eventually(() => got.length >= 2, "the listened-for notifications");
      expect(got).toEqual([{ method: "tools" }, { method: "resource", uri: keyToUri("/a") }]);
      await sub.close();
      await eventually(() => instance?.listening?.wants("tools") === false, "the listen stream's end");
      const lines = c.lines.length;
      notifyInstances(c.instances, change);
      await new Promise((r) => setTimeout(r, 50));
      expect(c.lines.length).toBe(lines);
    } finally {
      await c.close();
    }
  });
});
