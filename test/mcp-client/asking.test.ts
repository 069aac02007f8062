/**
 * An upstream MCP server that asks byteseek things in the middle of a call (test/fixtures/
 * mcp-asking-server.mjs, written with the SDK), over stdio (2025: requests of its own) and
 * Streamable HTTP (2026-07-28: inside the call's result): its question to a person becomes an
 * approval entry answered accept / decline / cancel, its sampling goes to the run's model only with
 * the `model` power, and its roots are the run's.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createMcpHandler, type McpServer } from "@modelcontextprotocol/server";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../agent/events.js";
import { summary } from "../../agent/runs.js";
import { runtimeSource } from "../../mcp/source.js";
import { type App, buildApp } from "../../server/app.js";
import type { PendingApproval, ToolProgress } from "../../tools/call/call-notices.js";
import type { CallOptions } from "../../tools/call/pipeline-types.js";
import { approvalKey } from "../../tools/gate/approvals.js";
import { MAX_SAMPLES } from "../../tools/mcp/upstream-requests.js";
import { usageKey } from "../../tools/records/usage.js";
import { json } from "../../tree/value.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "../agent/stack.js";
import { cliEnv } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { setPolicy, silent } from "../tools/helpers.js";
import { TEST_INSTALL, until } from "./helpers.js";
import { pipe, toHeaders } from "./oauth-fixture.js";

const FIXTURE = resolve(import.meta.dirname, "..", "fixtures", "mcp-asking-server.mjs");

let s: AgentStack;
let http: Server;
let httpUrl = "";
let app: App;
let appUrl = "";

beforeAll(async () => {
  s = await startAgentStack("byteseek-asking-");
  const { askingServer } = (await import(pathToFileURL(FIXTURE).href)) as { askingServer: () => McpServer };
  const handler = createMcpHandler(() => askingServer());
  http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers: toHeaders(req),
        ...(req.method === "POST" ? { body: new Uint8Array(Buffer.concat(chunks)) } : {}),
      });
      handler
        .fetch(request)
        .then((r) => pipe(r, res))
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const host = `127.0.0.1:${(http.address() as AddressInfo).port}`;
  httpUrl = `http://${host}/mcp`;
  const all = { read: true, write: true, exec: true, model: true, net: [host], tree: ["/"] };
  await setPolicy(s.tree, {
    grants: {
      default: all,
      runs: [
        { vid: "nomodel*", grant: { model: false } },
        { vid: "nofiles*", grant: { read: false, write: false } },
      ],
    },
  } as never);
  app = await buildApp({
    tree: s.tree,
    logger: silent,
    runtime: s.bs.runtime,
    agent: s.bs.agent,
    web: false,
  });
  appUrl = await app.listen({ host: "127.0.0.1", port: 0 });
  for (const [server, entry] of [
    ["askio", { command: [process.execPath, FIXTURE], readOnlyPaths: TEST_INSTALL }],
    ["askhttp", { url: httpUrl }],
  ] as const) {
    await s.tree.set(`/byteseek/mcp/${server}`, json(entry as never));
    const [report] = await s.bs.mcp.sync(server);
    expect(report?.ok, report?.error).toBe(true);
  }
});

afterAll(async () => {
  await app.close();
  // the MCP client's connections close with the stack: the upstream's server closes after it
  await stopAgentStack(s);
  await new Promise((r) => http.close(r));
});

/** A call whose run has a person present: the questions it waits on are collected. */
function withPerson(vid: string): { options: CallOptions; asked: PendingApproval[] } {
  const asked: PendingApproval[] = [];
  return { asked, options: { vid, waitForApproval: true, onApproval: (p) => asked.push(p) } };
}

async function firstQuestion(asked: PendingApproval[]): Promise<PendingApproval> {
  await until(() => asked.length > 0);
  return asked[0] as PendingApproval;
}

describe("an upstream's elicitation during a call", () => {
  it("waits as an approval entry with the form's schema, refuses content that does not fit it, and sends the accepted content back", async () => {
    const { options, asked } = withPerson("elicit1");
    const calling = s.bs.runtime.call("askio.ask", { why: "Who are you, really?" }, options);
    const q = await firstQuestion(asked);
    expect(q.key).toBe(approvalKey("elicit1/0"));
    expect(q.elicitation).toMatchObject({ server: "askio", message: "Who are you, really?" });
    const entry = await s.bs.runtime.approvals.read(q.key);
    expect(entry).toMatchObject({ state: "pending", tool: "askio.ask", rule: "elicitation" });
    expect(entry?.elicitation?.schema).toMatchObject({ required: ["name"] });
    expect(entry?.reason).toContain('the MCP server "askio" asks a question during askio.ask');

    const approvals = s.bs.runtime.approvals;
    await expect(approvals.decide(q.key, { decision: "approve", content: { age: 3 } })).rejects.toThrow(
      /does not fit the form.*\/name: expected a value/,
    );
    await expect(
      approvals.decide(q.key, { decision: "approve", content: { name: "Ada", age: "old" } }),
    ).rejects.toThrow(/\/age: expected must be integer/);
    await expect(
      approvals.decide(q.key, { decision: "approve", scope: "run", content: { name: "Ada" } }),
    ).rejects.toThrow(/an answer is given once/);
    await approvals.decide(
      q.key,
      { decision: "approve", content: { name: "Ada", age: 36 } },
      "person (test)",
    );

    const r = await calling;
    expect(r.kind).toBe("ok");
    expect(r.text).toContain('action=accept content={"name":"Ada","age":36}');
    expect(r.details.asked).toEqual([{ method: "elicitation/create", outcome: "accept", approval: q.key }]);
    expect((await approvals.read(q.key))?.decision).toMatchObject({
      action: "accept",
      content: { name: "Ada" },
    });
  });

  it("sends decline on a deny and cancel on a deny with cancel", async () => {
    for (const [cancel, action] of [
      [false, "decline"],
      [true, "cancel"],
    ] as const) {
      const { options, asked } = withPerson(`elicit-${action}`);
      const calling = s.bs.runtime.call("askio.ask", {}, options);
      const q = await firstQuestion(asked);
      await s.bs.runtime.approvals.decide(q.key, { decision: "deny", ...(cancel ? { cancel } : {}) });
      expect((await calling).text).toContain(`action=${action} content=null`);
    }
  });

  it("is answered over POST /v1/approvals (a misfit is a 400 and keeps it waiting) and with kvspace approve --content", async () => {
    const { options, asked } = withPerson("elicit-doors");
    const calling = s.bs.runtime.call("askio.ask", {}, options);
    const q = await firstQuestion(asked);
    const post = async (body: unknown) => {
      const res = await request(`${appUrl}/v1/approvals/elicit-doors/0`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    const misfit = await post({ decision: "approve", content: { name: "" } });
    expect(misfit.status).toBe(400);
    expect(misfit.body).toMatchObject({ error: { code: "APPROVAL_INVALID" } });
    expect((await s.bs.runtime.approvals.read(q.key))?.state).toBe("pending");
    const bad = await runInProcess(["approve", "elicit-doors/0", "--content", "[1]"], {
      env: cliEnv(appUrl),
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--content takes a JSON object");
    const cli = await runInProcess(["approve", "elicit-doors/0", "--content", '{"name":"Lin","age":7}'], {
      env: cliEnv(appUrl),
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toBe(`${q.key}\tapproved\taskio.ask\n`);
    expect((await calling).text).toContain('content={"name":"Lin","age":7}');
    expect((await post({ decision: "deny", cancel: true })).status).toBe(409);
  });

  it("is not answered by an MCP host's approval of the call it asks during: it waits for the person", async () => {
    // a form nothing is required of, which an empty approval would fit
    const calling = runtimeSource(s.tree, s.bs.runtime).call(
      "askio.ask",
      { why: "Anything to add?", open: true },
      { vid: "elicit-host", approvedBy: "person (MCP host test)" },
    );
    const key = approvalKey("elicit-host/0");
    await until(async () => (await s.bs.runtime.approvals.read(key)) !== undefined);
    await s.bs.runtime.approvals.decide(key, { decision: "deny" }, "person (test)");
    expect((await calling).text).toContain("action=decline content=null");
    expect((await s.bs.runtime.approvals.read(key))?.decision).toMatchObject({ by: "person (test)" });
  });

  it("answers cancel at once, writing no entry, when no person is present", async () => {
    const r = await s.bs.runtime.call("askio.ask", {}, { vid: "nobody1" });
    expect(r.text).toContain("action=cancel");
    expect(r.details.asked).toMatchObject([{ outcome: "cancel", why: "no person can be asked in this run" }]);
    expect(await s.tree.get(approvalKey("nobody1/0"))).toBeUndefined();
  });

  it("refuses content or cancel on an approval that is no question", async () => {
    const approvals = s.bs.runtime.approvals;
    const key = await approvals.requestApproval({
      vid: "plain1",
      tool: "x.y",
      args: {},
      reason: "r",
      rule: "confirm",
    });
    await expect(approvals.decide(key, { decision: "deny", cancel: true })).rejects.toThrow(/not a question/);
    await expect(approvals.decide(key, { decision: "approve", content: { a: "b" } })).rejects.toThrow(
      /not a question/,
    );
    expect((await approvals.read(key))?.state).toBe("pending");
  });

  it("is refused when calls of two runs are in progress on one 2025 connection (no run answers for another)", async () => {
    const a = withPerson("twoa");
    const callingA = s.bs.runtime.call("askio.ask", {}, a.options);
    const qa = await firstQuestion(a.asked);
    const b = withPerson("twob");
    const rb = await s.bs.runtime.call("askio.ask", {}, b.options);
    expect(rb.isError).toBe(true);
    expect(rb.text).toContain("calls of 2 byteseek runs are in progress on this connection");
    expect(b.asked).toEqual([]);
    await s.bs.runtime.approvals.decide(qa.key, { decision: "approve", content: { name: "A" } });
    expect((await callingA).text).toContain('content={"name":"A"}');
  });

  it("asks over Streamable HTTP on the 2026-07-28 era too (inside the call's result)", async () => {
    const { options, asked } = withPerson("elicit-http");
    const calling = s.bs.runtime.call("askhttp.ask", {}, options);
    const q = await firstQuestion(asked);
    expect(q.elicitation?.server).toBe("askhttp");
    await s.bs.runtime.approvals.decide(q.key, { decision: "approve", content: { name: "Grace" } });
    expect((await calling).text).toContain('action=accept content={"name":"Grace"}');
  });
});

describe("an upstream's sampling during a call", () => {
  it("goes through the run's configured model when the run holds the model power (stdio and HTTP)", async () => {
    for (const server of ["askio", "askhttp"]) {
      s.fake.script({ text: "blue" });
      const r = await s.bs.runtime.call(
        `${server}.think`,
        { prompt: "The sky's colour?" },
        { vid: "sampler" },
      );
      expect(r.text, server).toContain("model=fake-1 said=blue");
      expect(r.details.asked).toEqual([
        {
          method: "sampling/createMessage",
          outcome: "answered",
          model: "fake-1",
          tokens: { input: expect.any(Number), output: 1 },
          stop: "endTurn",
          ms: expect.any(Number),
        },
      ]);
      const req = s.fake.requests.at(-1);
      expect(req?.system).toBe("Answer in one word.");
      expect(req?.messages.at(-1)).toMatchObject({ role: "user", text: "The sky's colour?" });
    }
  });

  it("is recorded like a call and counted in the run's usage, and more than MAX_SAMPLES in one call are refused", async () => {
    for (const server of ["askio", "askhttp"]) {
      const vid = `spend-${server}`;
      s.fake.script(
        ...["one", "two", "three", "four"].map((text) => ({
          text,
          usage: { inputTokens: 100, outputTokens: 10 },
        })),
      );
      const before = s.fake.requests.length;
      const ok = await s.bs.runtime.call(`${server}.ponder`, { times: MAX_SAMPLES }, { vid });
      expect(ok.text, server).toBe("heard=one,two,three,four");
      // the upstream asked for a million tokens: it got the configured maxTokens at most
      expect(s.fake.requests.at(-1)?.maxTokens).toBe(4096);
      const stored = await s.tree.get(ok.record as string);
      const record = (stored?.kind === "json" ? stored.value.value : {}) as {
        details?: { asked?: unknown[] };
      };
      expect(record.details?.asked).toHaveLength(MAX_SAMPLES);
      expect(record.details?.asked?.[0]).toMatchObject({
        outcome: "answered",
        model: "fake-1",
        tokens: { input: 100, output: 10 },
        stop: "endTurn",
      });

      s.fake.script(
        ...[1, 2, 3, 4].map(() => ({ text: "more", usage: { inputTokens: 100, outputTokens: 10 } })),
      );
      const over = await s.bs.runtime.call(`${server}.ponder`, { times: MAX_SAMPLES + 1 }, { vid });
      expect(over.isError, server).toBe(true);
      expect(over.text).toContain(
        `byteseek answers at most ${MAX_SAMPLES} sampling requests during one call`,
      );
      expect((over.details.asked as Array<{ outcome: string }>).map((a) => a.outcome)).toEqual([
        ...Array(MAX_SAMPLES).fill("answered"),
        "refused",
      ]);
      // the excess never reached the model
      expect(s.fake.requests.length - before).toBe(2 * MAX_SAMPLES);

      const usage = await s.tree.get(usageKey(vid));
      expect(usage?.kind === "json" && usage.value.value).toMatchObject({
        calls: 2,
        samples: 2 * MAX_SAMPLES,
        tokens: { input: 2 * MAX_SAMPLES * 100, output: 2 * MAX_SAMPLES * 10 },
      });
      // what `kvspace runs` lists of the run
      expect((await summary(s.tree, vid, { status: "done" })).tokens).toEqual({ input: 800, output: 80 });
    }
  });

  it("is counted in the run's usage when it finishes after its call was recorded (an upstream that does not wait for it)", async () => {
    const vid = "late-sampler";
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    s.fake.script(async () => {
      await held;
      return { text: "late", usage: { inputTokens: 70, outputTokens: 7 } };
    });
    const before = s.fake.requests.length;
    const r = await s.bs.runtime.call("askio.hasty", {}, { vid });
    expect(r.text).toBe("asked, not waiting");
    const usage = async () => {
      const node = await s.tree.get(usageKey(vid));
      return (node?.kind === "json" ? node.value.value : {}) as Record<string, unknown>;
    };
    // the call is recorded while its sample still runs against the model
    await until(() => s.fake.requests.length > before);
    expect(await usage()).toMatchObject({ calls: 1 });
    expect((await usage()).samples).toBeUndefined();
    release();
    await until(async () => (await usage()).samples === 1, 10_000);
    expect(await usage()).toMatchObject({
      calls: 1,
      samples: 1,
      lateSamples: 1,
      tokens: { input: 70, output: 7 },
    });
  });

  it("is stopped with its call when the call is aborted, and counted as stopped (its tokens unknown) in the run's usage", async () => {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    s.fake.script(async () => {
      await held;
      return { text: "too late", usage: { inputTokens: 70, outputTokens: 7 } };
    });
    const before = s.fake.requests.length;
    const caller = new AbortController();
    try {
      const calling = s.bs.runtime.call(
        "askio.think",
        { prompt: "slowly" },
        { vid: "stopped-sampler", signal: caller.signal },
      );
      // the sample is running against the model when the call is aborted
      await until(() => s.fake.requests.length > before);
      caller.abort();
      expect((await calling).text).toContain("aborted");
    } finally {
      release();
    }
    const usage = async () => {
      const u = await s.tree.get(usageKey("stopped-sampler"));
      return (u?.kind === "json" ? u.value.value : {}) as Record<string, unknown>;
    };
    await until(async () => (await usage()).stoppedSamples === 1, 10_000);
    expect(await usage()).toMatchObject({ calls: 1, stoppedSamples: 1 });
    expect((await usage()).samples).toBeUndefined();
    expect((await usage()).tokens).toBeUndefined();
  });

  it("is refused, with the reason told to the upstream, when the run lacks the model power", async () => {
    const before = s.fake.requests.length;
    const r = await s.bs.runtime.call("askio.think", { prompt: "x" }, { vid: "nomodel1" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("does not hold the model power");
    expect(s.fake.requests.length).toBe(before);
  });
});

describe("the roots an upstream is told", () => {
  it("are the run's: its workspace when it may touch files, none when it may not", async () => {
    const workspace = pathToFileURL(s.bs.runtime.workspace).href;
    for (const server of ["askio", "askhttp"]) {
      expect((await s.bs.runtime.call(`${server}.roots`, {}, { vid: "files1" })).text).toBe(
        `roots=${workspace}`,
      );
      expect((await s.bs.runtime.call(`${server}.roots`, {}, { vid: "nofiles1" })).text).toBe("roots=");
    }
  });
});

describe("an upstream's progress and log lines", () => {
  it("reach the call's listener neutralised, at most 20 and a last one saying there was more", async () => {
    const told: ToolProgress[] = [];
    const r = await s.bs.runtime.call(
      "askio.chatty",
      { n: 3 },
      { vid: "chatty1", onProgress: (p) => told.push(p) },
    );
    expect(r.text).toBe("said 3");
    expect(told).toHaveLength(6);
    expect(told).toContainEqual({ kind: "progress", message: "step 1\\x1b[2K", progress: 1, total: 3 });
    expect(told).toContainEqual({ kind: "log", level: "warning", message: "chat: line 2" });

    const flood: ToolProgress[] = [];
    await s.bs.runtime.call("askio.chatty", { n: 40 }, { vid: "chatty2", onProgress: (p) => flood.push(p) });
    expect(flood).toHaveLength(21);
    expect(flood.at(-1)).toEqual({
      kind: "log",
      message: "(askio says more; the rest is not shown)",
      more: true,
    });
  });

  it("show in an agent turn's events as tool_progress of the call", async () => {
    s.fake.script({ toolCalls: [{ name: "askio.chatty", args: { n: 2 } }] }, { text: "done" });
    const events: AgentEvent[] = [];
    const result = await s.bs.agent.runTurn({
      vid: "chatty3",
      input: "talk",
      onEvent: (e) => events.push(e),
    });
    expect(result.calls[0]?.kind).toBe("ok");
    const progress = events.filter((e) => e.type === "tool_progress");
    expect(progress).toHaveLength(4);
    expect(progress).toContainEqual(
      expect.objectContaining({ name: "askio.chatty", kind: "progress", progress: 2, total: 2 }),
    );
  });
});
