/**
 * A Streamable HTTP upstream is reached at the address its name was checked at: the client's
 * resolver (one the test controls) is asked once per connection, and no second lookup — the SDK's,
 * the system's — can move the connection elsewhere (DNS rebinding).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { HostLookup } from "../../tools/net/host-rules.js";
import { setPolicy } from "../tools/helpers.js";
import { type McpHarness, mcpHarness } from "./helpers.js";

/** A minimal MCP server over Streamable HTTP (JSON answers), noting the Host of every request. */
function tinyHttpServer(hosts: string[]): Server {
  return createServer((req: IncomingMessage, res) => {
    hosts.push(String(req.headers.host));
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      const msg = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
      if (msg.id === undefined) return void res.writeHead(202).end();
      const result =
        msg.method === "initialize"
          ? {
              protocolVersion: msg.params?.protocolVersion ?? "2025-06-18",
              capabilities: { tools: {} },
              serverInfo: { name: "tiny", version: "1.0.0" },
            }
          : msg.method === "tools/list"
            ? { tools: [{ name: "hello", description: "Says hi.", inputSchema: { type: "object" } }] }
            : msg.method === "tools/call"
              ? { content: [{ type: "text", text: "hi from the pinned address" }] }
              : undefined;
      const answer = result
        ? { jsonrpc: "2.0", id: msg.id, result }
        : { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no such method" } };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
}

describe("MCP client: a Streamable HTTP upstream is pinned to the checked address", () => {
  let server: Server;
  let port: number;
  const hosts: string[] = [];
  /** What the resolver answers next for each name, in order (the last answer repeats). */
  const answers = new Map<string, string[]>();
  const asked: string[] = [];
  const lookup: HostLookup = async (host) => {
    asked.push(host);
    const list = answers.get(host);
    const next = list && list.length > 1 ? list.shift() : list?.[0];
    if (!next) throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    return [{ address: next, family: 4 }];
  };
  let h: McpHarness;

  beforeAll(async () => {
    server = tinyHttpServer(hosts);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
    h = await mcpHarness(process.env, lookup);
  });
  afterAll(async () => {
    await h.dispose();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    hosts.length = 0;
    asked.length = 0;
    answers.clear();
  });

  it("connects to the address its name resolved to when checked, keeping the name in Host (no second lookup)", async () => {
    // the system's resolver does not know pin.test: only the checked address reaches the server
    answers.set("pin.test", ["127.0.0.1"]);
    await h.register("pinned", { url: `http://pin.test:${port}/mcp` });
    const [report] = await h.mcp.sync("pinned");
    expect(report?.ok, report?.error).toBe(true);
    await setPolicy(h.tree, {
      grants: { runs: [{ vid: "r1", grant: { net: [`pin.test:${port}`] } }] },
    } as never);
    const r = await h.runtime.call("pinned.hello", {}, { vid: "r1" });
    expect(r.text).toContain("hi from the pinned address");
    expect(hosts.length).toBeGreaterThan(0);
    expect(new Set(hosts)).toEqual(new Set([`pin.test:${port}`]));
    expect(asked).toEqual(["pin.test"]);
  });

  it("refuses a run's server whose name resolves to loopback when connecting under net: [*], though the sync's check saw a public address", async () => {
    await setPolicy(h.tree, { grants: { runs: [{ vid: "wild", grant: { net: ["*"] } }] } } as never);
    // the first answer (the sync's check) is public; the next one rebinds to loopback
    answers.set("rebind.test", ["93.184.216.34", "127.0.0.1"]);
    await h.register("rebound", { url: `http://rebind.test:${port}/mcp` }, "wild");
    const [report] = await h.mcp.sync("rebound");
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain("resolves to 127.0.0.1, loopback (127.0.0.0/8)");
    expect(report?.error).toContain("grants.runs[0] (wild).net");
    expect(hosts).toEqual([]);
  });
});
