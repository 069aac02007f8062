import { readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SyncReport } from "../../tools/mcp/sync.js";
import { type Json, json } from "../../tree/value.js";
import { alive } from "../helpers/processes.js";
import { setPolicy, tempDir } from "../tools/helpers.js";
import {
  everythingStdio,
  type McpHarness,
  mcpHarness,
  newTag,
  serverScript,
  TEST_INSTALL,
  taggedProcesses,
  until,
} from "./helpers.js";

async function syncState(h: McpHarness, server: string): Promise<Record<string, unknown> | undefined> {
  const node = await h.tree.get(`/byteseek/mcp-sync/${server}`);
  return node?.kind === "json" ? (node.value.value as Record<string, unknown>) : undefined;
}

describe("MCP client: server-everything over stdio, one upstream for the calls that leave it as it was", () => {
  // each start and stop of the upstream costs seconds: these share one
  let h: McpHarness;
  let tag: string;
  let report: SyncReport | undefined;
  beforeAll(async () => {
    h = await mcpHarness();
    tag = newTag();
    await h.register("everything", everythingStdio(tag));
    [report] = await h.mcp.sync("everything");
  });
  afterAll(async () => {
    await h.dispose();
    // nothing the upstream started outlives byteseek's stop
    expect(await taggedProcesses(tag)).toEqual([]);
  });

  it("syncs each upstream tool into a declaration with impl mcp, its schema, description and annotations", async () => {
    expect(report?.ok, report?.error).toBe(true);
    expect(report?.added).toContain("everything.echo");
    expect(report?.added).toContain("everything.get-sum");
    const sum = await h.decl("everything.get-sum");
    expect(sum?.impl).toEqual({ kind: "mcp", server: "everything", tool: "get-sum" });
    expect(sum?.description).toBe("Returns the sum of two numbers");
    expect((sum?.params as { required?: string[] } | undefined)?.required).toEqual(["a", "b"]);
    expect(sum?.annotations).toMatchObject({ readOnlyHint: true });
    const listed = await h.runtime.listTools();
    expect(listed.invalid.filter((t) => t.name.startsWith("everything."))).toEqual([]);
    expect(listed.valid.map((t) => t.name)).toContain("everything.echo");
  });

  it("calls echo and get-sum through the boundary and records each call", async () => {
    const echo = await h.runtime.call("everything.echo", { message: "hello" }, { vid: "calls" });
    expect(echo.kind, echo.text).toBe("ok");
    expect(echo.text).toBe("Echo: hello");
    const sum = await h.runtime.call("everything.get-sum", { a: 2, b: 40 }, { vid: "calls" });
    expect(sum.text).toBe("The sum of 2 and 40 is 42.");
    const rec = await h.tree.get(sum.record as string);
    const value = rec?.kind === "json" ? (rec.value.value as Record<string, unknown>) : {};
    expect(value).toMatchObject({
      name: "everything.get-sum",
      kind: "ok",
      text: "The sum of 2 and 40 is 42.",
    });
    expect(value.decl).toMatchObject({ key: "/byteseek/tools/everything.get-sum" });
    expect(echo.record).toBe("/byteseek/tool/calls/0");
  });

  it("refuses bad arguments at the boundary (kind arg) without reaching the upstream", async () => {
    const r = await h.runtime.call("everything.get-sum", { a: "two", b: 1 }, { vid: "r1" });
    expect(r.kind).toBe("arg");
    expect(r.text).toContain("a: expected must be number");
    expect(h.mcp && (await h.mcp.list())[0]?.state).toBe("running");
  });

  it("gates a call on the power exec: a run without it is denied, naming the rule", async () => {
    await setPolicy(h.tree, { grants: { runs: [{ vid: "noexec", grant: { exec: false } }] } } as never);
    const r = await h.runtime.call("everything.echo", { message: "x" }, { vid: "noexec" });
    expect(r.kind).toBe("denied");
    expect(r.text).toContain('needs the power "exec"');
  });

  it("lists a stdio server's tools as blocked for a run without exec, as the gate refuses their calls", async () => {
    await setPolicy(h.tree, { grants: { runs: [{ vid: "noexec", grant: { exec: false } }] } } as never);
    const denied = (await h.runtime.listTools("noexec")).valid.find((t) => t.name === "everything.echo");
    expect(denied?.blocked).toContain('needs the power "exec"');
    expect(denied?.blocked).toContain("grants.runs");
    const granted = (await h.runtime.listTools("r1")).valid.find((t) => t.name === "everything.echo");
    expect(granted?.blocked).toBeUndefined();
  });

  it("answers runtime with the upstream's words for a tool it does not know (protocol error)", async () => {
    const nope = {
      name: "everything.nope",
      description: "x",
      params: { type: "object" },
      impl: { kind: "mcp", server: "everything", tool: "nope" },
    };
    await h.tree.set("/byteseek/tools/everything.nope", json(nope));
    // never synced: refused before the upstream is reached
    const unsynced = await h.runtime.call("everything.nope", {}, { vid: "r1" });
    expect(unsynced).toMatchObject({ kind: "vet", details: { code: "disabled_tool" } });
    expect(unsynced.text).toContain("no sync has declared");
    // synced once, gone upstream since (the next sync has not run yet): the upstream's own answer
    const state = await h.tree.get("/byteseek/mcp-sync/everything");
    const value =
      state?.kind === "json" ? (state.value.value as { tools: Record<string, Json> }) : { tools: {} };
    await h.tree.set(
      "/byteseek/mcp-sync/everything",
      json({ ...value, tools: { ...value.tools, "everything.nope": nope } } as Json),
    );
    const r = await h.runtime.call("everything.nope", {}, { vid: "r1" });
    expect(r.kind).toBe("runtime");
    expect(r.text).toMatch(/nope/);
    expect(r.text).toContain('"everything"');
  });

  it("cancels a call cut off by its timeout and keeps the upstream usable", async () => {
    await h.mcp.sync("everything");
    const decl = (await h.decl("everything.trigger-long-running-operation")) as Record<string, unknown>;
    await h.tree.set("/byteseek/tools/everything.trigger-long-running-operation", {
      kind: "json",
      value: { ...decl, timeoutMs: 300 } as never,
    });
    const r = await h.runtime.call(
      "everything.trigger-long-running-operation",
      { duration: 30, steps: 3 },
      { vid: "r1" },
    );
    expect(r.kind).toBe("runtime");
    expect(r.details.code).toBe("timeout");
    expect(r.text).toContain("was told to cancel it");
    const ok = await h.runtime.call("everything.echo", { message: "still here" }, { vid: "r1" });
    expect(ok.text).toBe("Echo: still here");
  });

  it("does not start a server an agent registered without the power exec", async () => {
    await setPolicy(h.tree, { grants: { runs: [{ vid: "noexec", grant: { exec: false } }] } } as never);
    const other = newTag();
    await h.register("sneaky", everythingStdio(other), "noexec");
    const [report] = await h.mcp.sync("sneaky");
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain('does not hold the power "exec"');
    expect(await taggedProcesses(other)).toEqual([]);
    expect(await h.decl("sneaky.echo")).toBeUndefined();
  });
});

describe("MCP client: server-everything over stdio", () => {
  let h: McpHarness;
  let tag: string;
  beforeEach(async () => {
    h = await mcpHarness();
    tag = newTag();
    await h.register("everything", everythingStdio(tag));
  });
  afterEach(async () => {
    await h.dispose();
    // nothing the upstream started outlives byteseek's stop
    expect(await taggedProcesses(tag)).toEqual([]);
  });

  it("keeps a person's local changes through a re-sync that changes the upstream copy", async () => {
    await h.mcp.sync("everything");
    const echo = (await h.decl("everything.echo")) as Record<string, unknown>;
    await h.tree.set("/byteseek/tools/everything.echo", {
      kind: "json",
      value: { ...echo, description: "Repeat a message back, prefixed with Echo:", confirm: true } as never,
    });
    // the upstream copy changes: every tool gets the entry's timeout
    await h.register("everything", everythingStdio(tag, { timeoutMs: 20_000 }));
    const [report] = await h.mcp.sync("everything");
    expect(report?.changed).toContain("everything.echo");
    const after = await h.decl("everything.echo");
    expect(after?.description).toBe("Repeat a message back, prefixed with Echo:");
    expect(after?.confirm).toBe(true);
    expect(after?.timeoutMs).toBe(20_000);
    expect((await h.decl("everything.get-sum"))?.timeoutMs).toBe(20_000);
    const state = await syncState(h, "everything");
    expect(
      (state?.last as { overridden: Record<string, string[]> } | undefined)?.overridden["everything.echo"],
    ).toEqual(["confirm", "description"]);
    // and again: nothing of the person's is lost on a sync with nothing new
    await h.mcp.sync("everything");
    expect((await h.decl("everything.echo"))?.confirm).toBe(true);
    const gated = await h.runtime.call("everything.echo", { message: "x" }, { vid: "r1" });
    expect(gated.kind).toBe("denied");
  });

  it("re-syncs when the upstream sends notifications/tools/list_changed", async () => {
    await h.mcp.sync("everything");
    // a person removes a tool locally; nothing but a sync brings it back
    await h.tree.del("/byteseek/tools/everything.echo");
    // a changed entry restarts the upstream on next use; server-everything announces its tools
    // changed once a client has initialized (it registers more then)
    await h.register("everything", everythingStdio(tag, { idleStopMs: 60_000 }));
    const sum = await h.runtime.call("everything.get-sum", { a: 1, b: 1 }, { vid: "r1" });
    expect(sum.kind, sum.text).toBe("ok");
    await until(async () => (await h.decl("everything.echo")) !== undefined);
    expect((await syncState(h, "everything"))?.reason).toBe("list_changed");
  });

  it("removes the tools of a server whose entry is deleted, and stops it", async () => {
    await h.mcp.sync("everything");
    const pid = (await h.mcp.list())[0]?.pid as number;
    expect(pid).toBeGreaterThan(0);
    await h.tree.del("/byteseek/mcp/everything");
    const [report] = await h.mcp.sync("everything");
    expect(report?.removed).toContain("everything.echo");
    expect(await h.decl("everything.echo")).toBeUndefined();
    expect(await syncState(h, "everything")).toBeUndefined();
    expect((await h.runtime.listTools()).valid.some((t) => t.name.startsWith("everything."))).toBe(false);
    expect(alive(pid)).toBe(false);
    expect(await h.mcp.list()).toEqual([]);
  });

  it("restarts a crashed upstream on the next call (after a backoff) and reuses it after", async () => {
    await h.mcp.sync("everything");
    const first = (await h.mcp.list())[0]?.pid as number;
    process.kill(first, "SIGKILL");
    await until(async () => (await h.mcp.list())[0]?.state === "backoff");
    const r = await h.runtime.call("everything.echo", { message: "again" }, { vid: "r1" });
    expect(r.kind, r.text).toBe("ok");
    const status = (await h.mcp.list())[0];
    expect(status?.state).toBe("running");
    expect(status?.pid).not.toBe(first);
    await h.runtime.call("everything.echo", { message: "once more" }, { vid: "r1" });
    expect((await h.mcp.list())[0]?.pid).toBe(status?.pid);
  });

  it("answers runtime, saying so, when the upstream dies during a call", async () => {
    await h.mcp.sync("everything");
    const pid = (await h.mcp.list())[0]?.pid as number;
    const pending = h.runtime.call(
      "everything.trigger-long-running-operation",
      { duration: 60, steps: 2 },
      { vid: "r1" },
    );
    // the request is on the upstream's stdin at once; it runs for a minute
    await new Promise((r) => setTimeout(r, 500));
    process.kill(pid, "SIGKILL");
    const r = await pending;
    expect(r.kind).toBe("runtime");
    expect(r.details.code).toBe("mcp_unavailable");
    expect(r.text).toContain('the MCP server "everything" stopped during the call');
  });

  it("stops an idle upstream after idleStopMs and starts it again on the next call", async () => {
    await h.register("everything", everythingStdio(tag, { idleStopMs: 100 }));
    await h.mcp.sync("everything");
    const pid = (await h.mcp.list())[0]?.pid as number;
    await until(async () => (await h.mcp.list())[0]?.state === "stopped");
    expect(alive(pid)).toBe(false);
    const r = await h.runtime.call("everything.echo", { message: "wake" }, { vid: "r1" });
    expect(r.text).toBe("Echo: wake");
  });
});

describe("MCP client: a Streamable HTTP server an agent registered", () => {
  it("is not reached under net: [*] when its name resolves to loopback, naming the address", async () => {
    // no DNS here: the client's resolver answers this one name with loopback
    const h = await mcpHarness(process.env, async (host) => {
      if (host === "rebind.test") return [{ address: "127.0.0.1", family: 4 }];
      throw new Error(`getaddrinfo ENOTFOUND ${host}`);
    });
    try {
      await setPolicy(h.tree, { grants: { runs: [{ vid: "wild", grant: { net: ["*"] } }] } } as never);
      await h.register("loop", { url: "http://rebind.test:7411/mcp" }, "wild");
      const [report] = await h.mcp.sync("loop");
      expect(report?.ok).toBe(false);
      expect(report?.error).toContain("resolves to 127.0.0.1, loopback (127.0.0.0/8)");
      expect(report?.error).toContain("grants.runs[0] (wild).net");
    } finally {
      await h.dispose();
    }
  });
});

describe("MCP client: what an upstream process gets", () => {
  it("gets the allow-listed environment, its entry's env and a private HOME, never the server's secrets", async () => {
    const tag = newTag();
    const h = await mcpHarness({
      PATH: process.env.PATH,
      HOME: "/home/someone",
      BYTESEEK_TOKEN: "token-must-not-leak",
      OPENAI_API_KEY: "key-must-not-leak",
      UNLISTED: "not-allow-listed",
    });
    try {
      await h.register(
        "everything",
        everythingStdio(tag, { env: { BYTESEEK_TEST_TAG: tag, GREETING: "hi" } }),
      );
      await h.mcp.sync("everything");
      const r = await h.runtime.call("everything.get-env", {}, { vid: "r1" });
      expect(r.kind, r.text).toBe("ok");
      expect(r.text).toContain('"GREETING": "hi"');
      // its HOME is the sandbox's private one, never the server's
      expect(r.text).toContain('"HOME": "/tmp/home"');
      expect(r.text).not.toContain("/home/someone");
      expect(r.text).not.toContain("must-not-leak");
      expect(r.text).not.toContain("not-allow-listed");
    } finally {
      await h.dispose();
    }
    expect(await taggedProcesses(tag)).toEqual([]);
  });

  it("refuses an agent registering a command server without the power exec (tree.set)", async () => {
    const h = await mcpHarness();
    try {
      await setPolicy(h.tree, { grants: { runs: [{ vid: "noexec", grant: { exec: false } }] } } as never);
      const r = await h.runtime.call(
        "tree.set",
        { key: "/byteseek/mcp/mine", value: { command: ["sh", "-c", "touch /tmp/x"] } },
        { vid: "noexec" },
      );
      expect(r.kind).toBe("denied");
      expect(r.text).toContain('needs the power "exec"');
      expect(await h.tree.get("/byteseek/mcp/mine")).toBeUndefined();
      const ok = await h.runtime.call(
        "tree.set",
        { key: "/byteseek/mcp/mine", value: { command: ["true"] } },
        { vid: "withexec" },
      );
      expect(ok.kind, ok.text).toBe("ok");
    } finally {
      await h.dispose();
    }
  });
});

describe("MCP client: failures at start", () => {
  let h: McpHarness;
  beforeEach(async () => {
    h = await mcpHarness();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it("says clearly, and at once, that an upstream exiting at start could not start", async () => {
    await h.register("broken", {
      command: [process.execPath, "-e", "console.error('missing API_URL'); process.exit(3)"],
      timeoutMs: 60_000,
    });
    const started = Date.now();
    const [report] = await h.mcp.sync("broken");
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain('the MCP server "broken"');
    expect(report?.error).toContain("could not start");
    expect(report?.error).toContain("missing API_URL");
    const [status] = await h.mcp.list();
    expect(status?.sync?.state).toBe("error");
    expect(status?.state).toBe("failed");
  });

  it("names a program that does not exist", async () => {
    await h.register("ghost", { command: ["byteseek-no-such-program-xyz"] });
    const [report] = await h.mcp.sync("ghost");
    expect(report?.error).toContain('no such program "byteseek-no-such-program-xyz"');
  });

  it("refuses an invalid entry with what is wrong", async () => {
    await h.register("bad", { command: "node server.js" });
    const [report] = await h.mcp.sync("bad");
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain("command");
    expect((await h.mcp.list())[0]?.state).toBe("invalid");
  });

  it("keeps the tools of the last good sync when the upstream cannot start", async () => {
    const tag = newTag();
    await h.register("everything", everythingStdio(tag));
    await h.mcp.sync("everything");
    await h.register("everything", { command: [process.execPath, "-e", "process.exit(1)"] });
    const [report] = await h.mcp.sync("everything");
    expect(report?.ok).toBe(false);
    expect(await h.decl("everything.echo")).toBeDefined();
    expect(await taggedProcesses(tag)).toEqual([]);
  });
});

describe("MCP client: an upstream that stays up when its stdin ends", () => {
  it("is sent SIGTERM when stopped, and nothing of it is left", async () => {
    const h = await mcpHarness();
    const tag = newTag();
    const out = await tempDir("byteseek-mcpc-signal-");
    const file = join(out.path, "signal.txt");
    try {
      // unsandboxed, so the signal reaches the server itself (in a sandbox it ends bubblewrap, and with it all inside)
      await setPolicy(h.tree, { sandbox: "off" } as never);
      const fixture = join(import.meta.dirname, "..", "fixtures", "mcp-lingering-server.mjs");
      await h.register("lingering", {
        command: [process.execPath, fixture],
        env: { BYTESEEK_TEST_TAG: tag, LINGER_FILE: file },
      });
      const [report] = await h.mcp.sync("lingering");
      expect(report?.ok, report?.error).toBe(true);
      expect((await h.mcp.list())[0]?.state).toBe("running");
    } finally {
      await h.dispose();
    }
    try {
      expect(await readFile(file, "utf8")).toBe("SIGTERM");
      expect(await taggedProcesses(tag)).toEqual([]);
    } finally {
      await out.remove();
    }
  });
});

describe("MCP client: server-filesystem", () => {
  let h: McpHarness;
  beforeEach(async () => {
    h = await mcpHarness();
    await writeFile(join(h.workspace, "notes.txt"), "first line\nsecond line\n");
    await h.register("fs", {
      command: [process.execPath, serverScript("server-filesystem"), h.workspace],
      readOnlyPaths: TEST_INSTALL,
    });
  });
  afterEach(async () => {
    await h.dispose();
  });

  it("reads a file with read_text_file", async () => {
    const [report] = await h.mcp.sync("fs");
    expect(report?.ok, report?.error).toBe(true);
    expect(report?.added).toContain("fs.read_text_file");
    const r = await h.runtime.call(
      "fs.read_text_file",
      { path: join(h.workspace, "notes.txt") },
      { vid: "r1" },
    );
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toContain("second line");
  });

  it("turns an upstream isError result into kind runtime with its text", async () => {
    await h.mcp.sync("fs");
    const r = await h.runtime.call("fs.read_text_file", { path: "/etc/passwd" }, { vid: "r1" });
    expect(r.kind).toBe("runtime");
    expect(r.details.code).toBe("mcp_error");
    expect(r.text).toMatch(/denied|outside/i);
  });
});

describe("MCP client: a Streamable HTTP server's tools in the listing", () => {
  let h: McpHarness;
  beforeEach(async () => {
    h = await mcpHarness();
    // the listing reads the registry entry and the declarations; no upstream is reached
    await h.register("remote", { url: "http://127.0.0.1:9/mcp" });
    await h.tree.set(
      "/byteseek/tools/remote.echo",
      json({
        name: "remote.echo",
        description: "echoes",
        snippet: "remote.echo(message) — echoes",
        params: { type: "object", properties: { message: { type: "string" } } },
        impl: { kind: "mcp", server: "remote", tool: "echo" },
      }),
    );
    // as a sync of it would have left it
    await h.tree.set(
      "/byteseek/mcp-sync/remote",
      json({
        server: "remote",
        state: "ok",
        reason: "manual",
        ts: 0,
        tools: { "remote.echo": { impl: { kind: "mcp", server: "remote", tool: "echo" } } },
      }),
    );
  });
  afterEach(async () => {
    await h.dispose();
  });

  it("lists an HTTP server's tools as blocked for a run without net to its host, as the gate refuses their calls", async () => {
    await setPolicy(h.tree, {
      grants: {
        runs: [
          { vid: "nonet", grant: { net: [] } },
          { vid: "elsewhere", grant: { net: ["example.com"] } },
          { vid: "withnet", grant: { net: ["127.0.0.1:9"] } },
        ],
      },
    } as never);
    for (const vid of ["nonet", "elsewhere"]) {
      const listed = (await h.runtime.listTools(vid)).valid.find((t) => t.name === "remote.echo");
      expect(listed?.blocked, vid).toContain('needs the power "net"');
      const r = await h.runtime.call("remote.echo", { message: "x" }, { vid });
      expect(r.kind, vid).toBe("denied");
      expect(r.text).toContain('needs the power "net"');
    }
    const granted = (await h.runtime.listTools("withnet")).valid.find((t) => t.name === "remote.echo");
    expect(granted?.blocked).toBeUndefined();
    // the reason is the HTTP server's power, not a stdio server's
    const execOnly = (await h.runtime.listTools("nonet")).valid.find((t) => t.name === "remote.echo");
    expect(execOnly?.blocked).not.toContain('"exec"');
  });
});

describe("MCP client: a Streamable HTTP server that cannot be reached says why", () => {
  let h: McpHarness;
  let web: Server;
  let base: string;
  let closedPort: number;
  beforeAll(async () => {
    h = await mcpHarness();
    // answers 401 under /auth and 404 elsewhere, as a real server without that path or credential would
    web = createServer((req, res) => {
      res.writeHead(req.url?.startsWith("/auth") ? 401 : 404, { "content-type": "text/plain" });
      res.end(req.url?.startsWith("/auth") ? "token required" : "no such page");
    });
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    const spare = createServer();
    await new Promise<void>((r) => spare.listen(0, "127.0.0.1", r));
    closedPort = (spare.address() as AddressInfo).port;
    await new Promise((r) => spare.close(r));
  });
  afterAll(async () => {
    await h.dispose();
    await new Promise((r) => web.close(r));
  });

  it("reports the status or the network error, not that it exited", async () => {
    await h.register("locked", { url: `${base}/auth/mcp` });
    await h.register("moved", { url: `${base}/old/mcp` });
    await h.register("down", { url: `http://127.0.0.1:${closedPort}/mcp` });
    const [locked] = await h.mcp.sync("locked");
    expect(locked?.error).toContain("HTTP 401 Unauthorized (token required)");
    expect(locked?.error).toContain('"headers"');
    const [moved] = await h.mcp.sync("moved");
    expect(moved?.error).toContain("HTTP 404 Not Found");
    expect(moved?.error).toContain("nothing serves MCP at /old/mcp");
    const [down] = await h.mcp.sync("down");
    expect(down?.error).toContain("connection refused");
    expect(down?.error).toContain("ECONNREFUSED");
    for (const r of [locked, moved, down]) {
      expect(r?.ok).toBe(false);
      expect(r?.error).not.toContain("exited before answering");
    }
  });
});
