import { type ChildProcess, spawn } from "node:child_process";
import { pino } from "pino";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../server/main.js";
import { POLICY_KEY } from "../../tools/gate/policy.js";
import { openTree } from "../../tree/index.js";
import { json } from "../../tree/value.js";
import { freePort } from "../server/helpers.js";
import { tempDir } from "../tools/helpers.js";
import { everythingStdio, newTag, serverScript, taggedProcesses, until } from "./helpers.js";

// server-everything's HTTP mode takes its port from PORT, not 0: freePort() finds one

/** server-everything in its Streamable HTTP mode, once it listens. */
async function everythingHttp(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [serverScript("server-everything"), "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    child.stderr?.on("data", (c: Buffer) => {
      err += c.toString();
      if (err.includes("listening on port")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`server-everything exited (${code}): ${err}`)));
  });
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

describe("byteseek serve with upstream MCP servers", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: RunningServer;
  let http: { child: ChildProcess; url: string };
  const tag = newTag();

  async function api(method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown) {
    const res = await request(`${server.url}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  }
  async function servers(): Promise<Array<Record<string, unknown>>> {
    return (await api("GET", "/v1/mcp")).body.servers as Array<Record<string, unknown>>;
  }

  beforeAll(async () => {
    dir = await tempDir("byteseek-mcpc-serve-");
    http = await everythingHttp();
    // registered before the server starts: synced at start
    const tree = await openTree({ backend: "classic", location: `${dir.path}/store` });
    await tree.set("/byteseek/mcp/local", json(everythingStdio(tag, { idleStopMs: 0 }) as never));
    await tree.close();
    server = await startServer({
      env: {
        KVSPACE: `${dir.path}/store`,
        BYTESEEK_PORT: "0",
        BYTESEEK_WORKSPACE: dir.path,
        BYTESEEK_SYNC: "never",
        // about upstream servers, not the credential: --no-auth
        BYTESEEK_TOKEN: "",
      },
      noAuth: true,
      cwd: dir.path,
      logger: pino({ level: "silent" }),
      handleSignals: false,
    });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    http?.child.kill("SIGKILL");
    await dir?.remove();
  });

  // server-everything offers get-roots-list, trigger-elicitation-request, trigger-sampling-request and simulate-research-query (16 tools) to a client that announces roots, elicitation and sampling, as byteseek does
  it("syncs a registered stdio server when it starts and calls its tools over HTTP", async () => {
    await until(async () => (await servers())[0]?.tools === 16, 30_000);
    const r = await api("POST", "/v1/tools/local.echo/call", { args: { message: "over http" }, vid: "h1" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: "ok", text: "Echo: over http" });
  });

  it("follows the registry: a Streamable HTTP server written is synced, and gated on net to its host", async () => {
    const put = await api("PUT", "/v1/tree/byteseek/mcp/remote", { url: http.url });
    expect(put.status).toBeLessThan(300);
    await until(async () => (await servers()).find((s) => s.server === "remote")?.tools === 16, 30_000);
    const remote = (await servers()).find((s) => s.server === "remote");
    expect(remote).toMatchObject({ transport: "http", target: http.url, state: "running" });
    const denied = await api("POST", "/v1/tools/remote.get-sum/call", { args: { a: 1, b: 2 }, vid: "h1" });
    expect(denied.body).toMatchObject({ kind: "denied" });
    expect(String(denied.body.text)).toContain('needs the power "net"');
    const host = new URL(http.url).host;
    await server.tree.set(
      POLICY_KEY,
      json({
        grants: { default: { read: true, write: true, exec: true, model: true, net: [host], tree: ["/"] } },
      }),
      {
        ro: true,
        force: true,
      },
    );
    const ok = await api("POST", "/v1/tools/remote.get-sum/call", { args: { a: 1, b: 2 }, vid: "h1" });
    expect(ok.body).toMatchObject({ kind: "ok", text: "The sum of 1 and 2 is 3." });
  });

  it("syncs on demand with POST /v1/mcp/sync and removes a server's tools when its entry is deleted", async () => {
    const sync = await api("POST", "/v1/mcp/sync", { server: "remote" });
    expect(sync.body.reports).toEqual([
      { server: "remote", ok: true, tools: 16, added: [], changed: [], removed: [], conflicts: [], held: [] },
    ]);
    await api("DELETE", "/v1/tree/byteseek/mcp/remote");
    await until(async () => (await api("GET", "/v1/tree/byteseek/tools/remote.echo")).status === 404, 30_000);
    expect((await servers()).map((s) => s.server)).toEqual(["local"]);
  });

  it("stops every upstream process when the server stops", async () => {
    const pid = (await servers())[0]?.pid as number;
    expect(pid).toBeGreaterThan(0);
    expect(await taggedProcesses(tag)).toContain(pid);
    await server.close();
    expect(await taggedProcesses(tag)).toEqual([]);
  });
});
