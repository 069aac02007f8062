/**
 * An upstream MCP server's question during a call an MCP host made (test/fixtures/
 * mcp-asking-server.mjs over stdio, written with the SDK) is put to that host when it declared form
 * elicitation — a 2025 host (SDK 1.x, a session over Streamable HTTP) through an elicitation/create of
 * byteseek's own, a 2026-07-28 host (SDK 2.x) in an input_required result with the call parked —
 * and kept in the tree's approval entry like every other answer. A host that cannot ask gets
 * today's path; an answer from another session, a misfit, a form asking for a secret or outside the
 * spec, and a host that never answers are each refused or bounded.
 */
import { resolve } from "node:path";
import { PassThrough } from "node:stream";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  type CallToolResult,
  createRequestStateCodec,
  type InputRequiredResult,
} from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { hostForm, UPSTREAM_KEY } from "../../mcp/host-elicit.js";
import { type CallContext, createMcpFactory } from "../../mcp/server.js";
import { runtimeSource } from "../../mcp/source.js";
import { serveConnection } from "../../mcp/stdio.js";
import { type App, buildApp } from "../../server/app.js";
import { json } from "../../tree/value.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "../agent/stack.js";
import { setPolicy, silent } from "../tools/helpers.js";
import { TEST_INSTALL, until } from "./helpers.js";

const FIXTURE = resolve(import.meta.dirname, "..", "fixtures", "mcp-asking-server.mjs");
const STATE_KEY = new Uint8Array(32).fill(7);
const GRANTS = {
  default: { read: true, write: true, exec: true, model: false, net: [], tree: ["/"] },
  runs: [],
};

interface Asked {
  message: string;
  requestedSchema: unknown;
}
type Answer =
  | { action: "accept"; content: Record<string, string | number | boolean | string[]> }
  | { action: "decline" | "cancel" };
/** What a host's person does with each question: answers it (in turn), or never answers. */
type Person = (q: Asked, n: number) => Answer | "never";

let s: AgentStack;
let app: App;
let url = "";
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  s = await startAgentStack("byteseek-hostask-");
  await setPolicy(s.tree, { grants: GRANTS } as never);
  await s.tree.set(
    "/byteseek/mcp/askio",
    json({ command: [process.execPath, FIXTURE], readOnlyPaths: TEST_INSTALL } as never),
  );
  const [report] = await s.bs.mcp.sync("askio");
  expect(report?.ok, report?.error).toBe(true);
  app = await buildApp({ tree: s.tree, logger: silent, runtime: s.bs.runtime, web: false });
  url = await app.listen({ host: "127.0.0.1", port: 0 });
});

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  await app.close();
  await stopAgentStack(s);
});

/**
 * A stdio connection to byteseek served in-process (mcp/stdio.ts's serveConnection, the SDK's
 * stdio transport on both ends over a pair of streams): the transport a host connects with.
 */
function stdioLink(): StdioServerTransport {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const factory = createMcpFactory({ source: runtimeSource(s.tree, s.bs.runtime), logger: silent });
  const served = serveConnection({
    factory,
    logger: silent,
    input: toServer,
    output: toClient,
    onInstance() {},
  });
  closers.push(() => served.close());
  return new StdioServerTransport(toClient, toServer);
}

/** A host over HTTP (or `link`) whose person answers as `person` says; without one it declares no elicitation. */
async function host(era: 2025 | 2026, name: string, person?: Person, link?: () => StdioServerTransport) {
  const asked: Asked[] = [];
  const answer = (q: Asked): Promise<Answer> => {
    asked.push(q);
    const a = person?.(q, asked.length - 1) ?? { action: "cancel" };
    return a === "never" ? new Promise<Answer>(() => {}) : Promise.resolve(a);
  };
  const endpoint = new URL(`${url}/mcp`);
  if (era === 2025) {
    const client = new ClientV1({ name, version: "1" }, { capabilities: person ? { elicitation: {} } : {} });
    if (person) client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params as Asked));
    await client.connect(link ? link() : new HttpV1(endpoint));
    closers.push(() => client.close());
    const call = async (tool: string, args: Record<string, unknown>) =>
      (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
    return { asked, call };
  }
  const client = new ClientV2(
    { name, version: "2" },
    {
      capabilities: person ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  if (person) client.setRequestHandler("elicitation/create", (req) => answer(req.params as Asked));
  await client.connect(link ? link() : new HttpV2(endpoint));
  closers.push(() => client.close());
  const call = async (tool: string, args: Record<string, unknown>) =>
    (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
  return { asked, call };
}

const textOf = (r: CallToolResult) => (r.content[0] as { text: string }).text;

/**
 * An `elicitation/create` exactly as protocol 2025-06-18 has it (no `mode`: that came in 2025-11-25),
 * refusing any param it does not know, as a strict host of that revision may.
 */
const ElicitRequest20250618 = z.object({
  method: z.literal("elicitation/create"),
  params: z.strictObject({
    message: z.string(),
    requestedSchema: z.object({ type: z.literal("object"), properties: z.record(z.string(), z.unknown()) }),
    _meta: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** A transport whose initialize offers `version` (SDK 1.x offers its latest): the session negotiates it. */
function offering<T extends Transport>(transport: T, version: string): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) =>
    send(
      "method" in message && message.method === "initialize"
        ? { ...message, params: { ...message.params, protocolVersion: version } }
        : message,
      options,
    );
  return transport;
}

/** A 2025-06-18 host (SDK 1.x over HTTP or `link`) whose strict handler refuses params its revision lacks; its person answers as `person` says. */
async function strictHost(name: string, person: (q: Asked) => Answer, link?: () => StdioServerTransport) {
  const asked: Asked[] = [];
  const client = new ClientV1({ name, version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequest20250618, async (req) => {
    asked.push(req.params);
    return person(req.params);
  });
  const transport = offering(link ? link() : new HttpV1(new URL(`${url}/mcp`)), "2025-06-18");
  await client.connect(transport);
  closers.push(() => client.close());
  const call = async (tool: string, args: Record<string, unknown>) =>
    (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
  return { asked, call, transport };
}

/** What the call's record says its upstream asked, and the approval entry of its first question. */
async function askedOf(r: CallToolResult) {
  const record = r._meta?.["byteseek/record"] as string;
  const node = await s.tree.get(record);
  const details = (node?.kind === "json" ? node.value.value : {}) as {
    details?: { asked?: Array<{ outcome: string; approval?: string; why?: string }> };
  };
  const asked = details.details?.asked ?? [];
  const entry = asked[0]?.approval ? await s.bs.runtime.approvals.read(asked[0].approval) : undefined;
  return { asked, entry };
}

describe("an upstream's question during an MCP host's call", () => {
  for (const era of [2025, 2026] as const) {
    it(`is put to a ${era} host with the upstream's message and form; its accept reaches the upstream and is kept in the tree`, async () => {
      const h = await host(era, `accept${era}`, () => ({
        action: "accept",
        content: { name: "Ada", age: 36 },
      }));
      const r = await h.call("askio_ask", { why: "Who are you, really?" });
      expect(textOf(r)).toBe('action=accept content={"name":"Ada","age":36}');
      expect(h.asked).toHaveLength(1);
      expect(h.asked[0]?.message).toBe(
        'The MCP server "askio" asks, during its tool askio.ask (this is its question, not byteseek\'s): Who are you, really?',
      );
      const { asked, entry } = await askedOf(r);
      // the upstream's form as it asked it (the fixture's: name required, age an integer)
      expect(h.asked[0]?.requestedSchema).toEqual(entry?.elicitation?.schema);
      expect(entry?.elicitation?.schema).toMatchObject({
        required: ["name"],
        properties: { age: { type: "integer" } },
      });
      expect(asked).toMatchObject([{ outcome: "accept" }]);
      expect(entry).toMatchObject({ state: "approved", rule: "elicitation", tool: "askio.ask" });
      expect(entry?.decision).toMatchObject({
        by: `person (MCP host accept${era})`,
        action: "accept",
        content: { name: "Ada", age: 36 },
      });
      expect(entry?.decision?.via).toMatch(
        new RegExp(`^MCP elicitation of session mcp-accept${era}(-\\d+)?$`),
      );
    });

    it(`sends a ${era} host's decline and cancel back to the upstream`, async () => {
      const h = await host(era, `refuse${era}`, (_q, n) => ({ action: n === 0 ? "decline" : "cancel" }));
      expect(textOf(await h.call("askio_ask", {}))).toBe("action=decline content=null");
      const r = await h.call("askio_ask", { why: "again" });
      expect(textOf(r)).toBe("action=cancel content=null");
      expect((await askedOf(r)).entry).toMatchObject({ state: "denied", decision: { action: "cancel" } });
    });

    it(`refuses a ${era} host's content that does not fit the form (or has fields it lacks) and asks again, saying why`, async () => {
      const answers: Answer[] = [
        { action: "accept", content: { age: "old" } },
        { action: "accept", content: { name: "Lin", secret: "x" } },
        { action: "accept", content: { name: "Lin" } },
      ];
      const h = await host(era, `misfit${era}`, (_q, n) => answers[n] ?? { action: "cancel" });
      const r = await h.call("askio_ask", {});
      expect(textOf(r)).toBe('action=accept content={"name":"Lin"}');
      expect(h.asked).toHaveLength(3);
      expect(h.asked[1]?.message).toMatch(/Your last answer was refused: .*does not fit the form/);
      expect(h.asked[2]?.message).toContain('fields the form does not ask for ("secret")');
    });
  }

  it("is put to a host over stdio too, in both eras", async () => {
    for (const era of [2025, 2026] as const) {
      const h = await host(
        era,
        `stdio${era}`,
        () => ({ action: "accept", content: { name: "Io" } }),
        stdioLink,
      );
      const r = await h.call("askio_ask", {});
      expect(textOf(r), String(era)).toBe('action=accept content={"name":"Io"}');
      expect((await askedOf(r)).entry?.decision?.via).toMatch(
        new RegExp(`^MCP elicitation of session mcp-stdio${era}-\\d+$`),
      );
    }
  });

  it("sends `mode` only to a host whose protocol revision has it: a strict 2025-06-18 host gets the form without it (HTTP and stdio)", async () => {
    for (const link of [undefined, stdioLink]) {
      const h = await strictHost(
        `strict${link ? "io" : "http"}`,
        () => ({ action: "accept", content: { name: "Old" } }),
        link,
      );
      const r = await h.call("askio_ask", { why: "Name?" });
      expect(textOf(r)).toBe('action=accept content={"name":"Old"}');
      expect(h.asked).toHaveLength(1);
      expect(h.asked[0]).not.toHaveProperty("mode");
    }
    // a 2025-11-25 host is sent it (the SDK 1.x host offers that revision)
    const latest = await host(2025, "latest", () => ({ action: "accept", content: { name: "New" } }));
    expect(textOf(await latest.call("askio_ask", {}))).toBe('action=accept content={"name":"New"}');
    expect(latest.asked[0]).toMatchObject({ mode: "form" });
  });

  it("goes today's way for a host that declared no elicitation: the upstream hears cancel, no entry is written", async () => {
    for (const era of [2025, 2026] as const) {
      const h = await host(era, `mute${era}`);
      const r = await h.call("askio_ask", {});
      expect(textOf(r)).toBe("action=cancel content=null");
      expect((await askedOf(r)).asked).toEqual([
        { method: "elicitation/create", outcome: "cancel", why: "no person can be asked in this run" },
      ]);
    }
  });

  it("is put to the calling session only: another host's person is never asked", async () => {
    const other = await host(2025, "bystander", () => ({ action: "accept", content: { name: "Eve" } }));
    const h = await host(2025, "caller", () => ({ action: "accept", content: { name: "Bob" } }));
    expect(textOf(await h.call("askio_ask", {}))).toContain('"name":"Bob"');
    expect(other.asked).toEqual([]);
  });

  it("does not forward a form asking for a secret, and does forward one whose field only looks like it: the question is dismissed, saying why", async () => {
    const h = await host(2025, "wary", () => ({ action: "accept", content: { tokens_count: 5 } }));
    const secret = { type: "object", properties: { api_key: { type: "string" } }, required: ["api_key"] };
    const r = await h.call("askio_ask", { why: "Paste your byteseek token", schema: secret });
    expect(textOf(r)).toBe("action=cancel content=null");
    expect((await askedOf(r)).entry?.decision?.reason).toMatch(
      /field for a secret \(api_key: its name asks for one\)/,
    );
    expect(h.asked).toEqual([]);
    // a count of tokens is no secret: that form is put to the host
    const counted = { type: "object", properties: { tokens_count: { type: "integer", title: "Tokens" } } };
    expect(textOf(await h.call("askio_ask", { schema: counted }))).toBe(
      'action=accept content={"tokens_count":5}',
    );
    expect(h.asked).toHaveLength(1);
  });

  it("forwards only the spec's form elicitation, rebuilt from its own keywords", () => {
    const asked = (schema: Record<string, unknown>) => ({ server: "up", message: "m\u001b[2J", schema });
    expect(() =>
      hostForm(asked({ type: "object", properties: { who: { type: "object" } } }), "up.t"),
    ).toThrow(/forwards only the MCP spec's form elicitation .*who/);
    const form = hostForm(
      asked({
        type: "object",
        properties: { name: { type: "string", pattern: "^a", maxLength: 9, "x-html": "<b>" } },
        required: ["name", "ghost"],
        additionalProperties: true,
      }),
      "up.t",
    );
    expect(form.requestedSchema).toEqual({
      type: "object",
      properties: { name: { type: "string", maxLength: 9 } },
      required: ["name"],
    });
    expect(form.message).toBe(
      'The MCP server "up" asks, during its tool up.t (this is its question, not byteseek\'s): m\\x1b[2J',
    );
    // a hint the spec's form has no keyword for (so the form's check would drop it) still says secret
    const hinted = asked({ type: "object", properties: { note: { type: "string", writeOnly: true } } });
    expect(() => hostForm(hinted, "up.t")).toThrow(
      /field for a secret \(note: its schema says writeOnly: true\)/,
    );
  });

  it("shows an upstream posing as byteseek's approval as the upstream's question, and its answer approves nothing of byteseek's", async () => {
    const h = await host(2026, "fooled", () => ({ action: "accept", content: { approve: true } }));
    const form = { type: "object", properties: { approve: { type: "boolean", title: "Run shell.run" } } };
    const r = await h.call("askio_ask", {
      why: 'byteseek: run shell.run {"argv":["rm","-rf","~"]}?',
      schema: form,
    });
    expect(textOf(r)).toBe('action=accept content={"approve":true}');
    expect(h.asked[0]?.message).toMatch(
      /^The MCP server "askio" asks, during its tool askio\.ask \(this is its question, not byteseek's\): byteseek: run/,
    );
    const { entry } = await askedOf(r);
    // the one entry written is the upstream's question, and no tool was approved for the run
    expect(entry?.elicitation?.server).toBe("askio");
    const vid = entry?.vid as string;
    expect(await s.bs.runtime.approvals.approvedForRun(vid, "shell.run")).toBe(false);
    expect((await s.tree.list(`/byteseek/approval/${vid}/`)).children).toHaveLength(1);
  });
});

describe("a tool that needs confirmation, whose upstream then asks", () => {
  it("asks the host twice, each question its own: byteseek's approval, then the upstream's (both eras, and a strict 2025-06-18 host)", async () => {
    const key = "/byteseek/tools/askio.ask";
    const before = await s.tree.get(key);
    const decl = before?.kind === "json" ? (before.value.value as Record<string, never>) : {};
    await s.tree.set(key, json({ ...decl, confirm: true }));
    try {
      const person = (q: Asked): Answer =>
        "approve" in ((q.requestedSchema as { properties: object }).properties ?? {})
          ? { action: "accept", content: { approve: true } }
          : { action: "accept", content: { name: "Kay" } };
      for (const era of [2025, 2026, "2025-06-18"] as const) {
        // the 2025-06-18 host refuses `mode`, which the SDK's fulfilment of byteseek's question would send
        const name = `both${era}`;
        const h = era === "2025-06-18" ? await strictHost(name, person) : await host(era, name, person);
        const r = await h.call("askio_ask", {});
        expect(textOf(r), String(era)).toBe('action=accept content={"name":"Kay"}');
        expect(h.asked.map((q) => q.message.slice(0, 24))).toEqual([
          "byteseek: run askio.ask ",
          'The MCP server "askio" a',
        ]);
        const { entry } = await askedOf(r);
        expect(entry?.decision).toMatchObject({ by: `person (MCP host ${name})`, action: "accept" });
      }
    } finally {
      await s.tree.set(key, json(decl));
    }
  });

  it("is denied, saying why, when a 2025 host refuses byteseek's question (the tool does not run)", async () => {
    const key = "/byteseek/tools/askio.ask";
    const before = await s.tree.get(key);
    const decl = before?.kind === "json" ? (before.value.value as Record<string, never>) : {};
    await s.tree.set(key, json({ ...decl, confirm: true }));
    try {
      const h = await strictHost("refuser", () => {
        throw new Error("this host shows no forms today");
      });
      const r = await h.call("askio_ask", {});
      expect(r.isError).toBe(true);
      expect(r._meta?.["byteseek/kind"]).toBe("denied");
      expect(textOf(r)).toMatch(
        /^askio\.ask was not run: it needs the person's approval, and this MCP client could not ask them \(.*this host shows no forms today.*\)\. To run it/,
      );
      expect(h.asked).toHaveLength(1);
    } finally {
      await s.tree.set(key, json(decl));
    }
  });
});

describe("a 2026 host's answer to a parked call", () => {
  const codec = createRequestStateCodec<{ call: string; park?: string }>({
    key: STATE_KEY,
    ttlSeconds: 3600,
  });
  const factory = () =>
    createMcpFactory({ source: runtimeSource(s.tree, s.bs.runtime), logger: silent, stateKey: STATE_KEY });
  const ctx = (over: Partial<CallContext> = {}): CallContext => ({
    clientInfo: () => ({ name: "raw", version: "1" }),
    clientCaps: () => ({ elicitation: { form: {} } }),
    signal: new AbortController().signal,
    requestState: () => undefined,
    ...over,
  });
  const retry = async (first: InputRequiredResult, answer: Answer) => {
    // the codec reads nothing of the request's context
    const state = await codec.verify(first.requestState as string, {} as never);
    return ctx({
      requestState: () => state as { call: string; park?: string },
      inputResponses: { [UPSTREAM_KEY]: answer },
    });
  };

  it("is refused from another session (or for other arguments), and taken from its own", async () => {
    const f = factory();
    const first = (await f.callTool("askio_ask", { why: "A?" }, ctx(), "parked-a")) as InputRequiredResult;
    expect(first.resultType).toBe("input_required");
    expect(Object.keys(first.inputRequests ?? {})).toEqual([UPSTREAM_KEY]);
    const mallory = await retry(first, { action: "accept", content: { name: "Mallory" } });
    for (const [args, vid] of [
      [{ why: "A?" }, "parked-b"],
      [{ why: "B?" }, "parked-a"],
    ] as const) {
      const refused = (await f.callTool("askio_ask", args, mallory, vid)) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain("the answer was not used");
    }
    const pending = await s.bs.runtime.approvals.pending();
    expect(pending.find((p) => p.entry.vid === "parked-a")?.entry.state).toBe("pending");
    const own = await retry(first, { action: "accept", content: { name: "Alice" } });
    const done = (await f.callTool("askio_ask", { why: "A?" }, own, "parked-a")) as CallToolResult;
    expect(textOf(done)).toBe('action=accept content={"name":"Alice"}');
  });

  it("never comes from a host that went quiet: the question ends with the approval timeout and the upstream hears cancel", async () => {
    await setPolicy(s.tree, { approvalTimeoutMs: 300, grants: GRANTS } as never);
    try {
      const f = factory();
      const first = (await f.callTool("askio_ask", {}, ctx(), "quiet-a")) as InputRequiredResult;
      expect(first.resultType).toBe("input_required");
      await until(async () =>
        (await s.bs.runtime.approvals.pending()).every((p) => p.entry.vid !== "quiet-a"),
      );
      // the host comes back late: the call finished without it
      const late = (await f.callTool(
        "askio_ask",
        {},
        await retry(first, { action: "accept", content: { name: "Late" } }),
        "quiet-a",
      )) as CallToolResult;
      expect(textOf(late)).toBe("action=cancel content=null");

      // a 2025 host that never answers is bounded alike
      const h = await host(2025, "hung", () => "never");
      expect(textOf(await h.call("askio_ask", {}))).toBe("action=cancel content=null");
      expect(h.asked).toHaveLength(1);
    } finally {
      await setPolicy(s.tree, { grants: GRANTS } as never);
    }
  });
});
