/**
 * Replay is exact (issue #32): a corpus of runs recorded by the real loop, one per wire format the
 * fake model speaks (OpenAI chat completions and Anthropic messages, each streamed and as one JSON
 * body), each calling a tool of every kind (built-in file and tree tools, a shell, an http, an llm
 * and an MCP tool), replays with no tool execution, no model request and the same display; and
 * every record of it, changed, makes the replay say so at exactly that step — a tool's result (its
 * record, or what the model was sent), a model answer, a prompt, a declaration's pin.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayRun } from "../../agent/replay/replay.js";
import { type RunTranscript, readTranscript } from "../../agent/replay/transcript.js";
import type { ReplayReport } from "../../agent/replay/types.js";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { type Json, json, str } from "../../tree/value.js";
import { TEST_INSTALL } from "../mcp-client/helpers.js";
import { grantEverything, silent } from "../tools/helpers.js";
import { turnDisplay } from "./replay-check.js";
import { type AgentStack, startAgentStack, stopAgentStack } from "./stack.js";

const MCP_FIXTURE = resolve(import.meta.dirname, "..", "fixtures", "mcp-asking-server.mjs");

const WIRES = [
  { vid: "wire-openai-sse", api: "openai", stream: true },
  { vid: "wire-openai-json", api: "openai", stream: false },
  { vid: "wire-anthropic-sse", api: "anthropic", stream: true },
  { vid: "wire-anthropic-json", api: "anthropic", stream: false },
] as const;
type Wire = (typeof WIRES)[number];

let stack: AgentStack;
let counter: Server;
let hits = 0;
let second: Byteseek | undefined;
/** Each run's turn as it was shown. */
const shown = new Map<string, string>();

/** A declaration of `name` with one string parameter, running `impl`. */
function declaration(name: string, impl: Json): Json {
  return {
    name,
    description: `${name}: a tool of kind ${(impl as { kind: string }).kind}`,
    snippet: `${name}(text)`,
    params: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    impl,
  };
}

beforeAll(async () => {
  // the Anthropic runs name the fake model as a client's settings
  stack = await startAgentStack("byteseek-replay-mutations-", { BYTESEEK_LLM_CLIENT_URLS: "*" });
  counter = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      hits++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ hits }));
    });
  });
  await new Promise<void>((r) => counter.listen(0, "127.0.0.1", r));
  const host = `127.0.0.1:${(counter.address() as AddressInfo).port}`;
  const { tree } = stack.bs;
  await grantEverything(tree, [host]);
  await tree.set("/byteseek/prompt/hi", str("Say hi to the text you are given."));
  await tree.set(
    "/byteseek/tools/text.wc",
    json(declaration("text.wc", { kind: "shell", argv: ["sh", "-c", 'printf "%s" "$0" | wc -w', "{text}"] })),
  );
  await tree.set(
    "/byteseek/tools/count.hit",
    json(declaration("count.hit", { kind: "http", url: `http://${host}/hit`, method: "POST" })),
  );
  await tree.set(
    "/byteseek/tools/text.hi",
    json(declaration("text.hi", { kind: "llm", prompt: "/byteseek/prompt/hi" })),
  );
  await tree.set(
    "/byteseek/mcp/askio",
    json({ command: [process.execPath, MCP_FIXTURE], readOnlyPaths: TEST_INSTALL } as never),
  );
  const [synced] = await stack.bs.mcp.sync("askio");
  expect(synced?.ok, synced?.error).toBe(true);

  // the streamed wires run on the stack's byteseek (Anthropic as a client's model settings, which
  // win over the server's), the JSON ones on a second byteseek asking for one body; the MCP
  // upstream is called on the first only (a second client would start a second upstream)
  second = await createByteseek({
    tree: stack.tree,
    workspace: stack.workspace,
    logger: silent,
    seed: false,
    sweep: false,
    env: {
      BYTESEEK_LLM_API: "openai",
      BYTESEEK_LLM_URL: `${stack.fake.url}/v1`,
      BYTESEEK_LLM_MODEL: "fake-1",
      BYTESEEK_LLM_CLIENT_URLS: "*",
    },
    providerDeps: { stream: false },
  });
  for (const wire of WIRES) await record(wire);
});

afterAll(async () => {
  await second?.close();
  if (stack) await stopAgentStack(stack);
  await new Promise((r) => counter?.close(r));
});

/** What each wire's run calls, in order (the MCP tool on the streamed wires only). */
function callsOf(wire: Wire): string[] {
  const mcp = wire.stream ? ["askio.chatty"] : [];
  return ["edit.write", "edit.read", "tree.set", "text.wc", "count.hit", "text.hi", ...mcp];
}

/**
 * Files, then the tree and a shell tool, then an http and an llm tool, then (streamed) MCP, then
 * the answer.
 */
async function record(wire: Wire): Promise<void> {
  const { vid } = wire;
  const file = `${vid}.txt`;
  stack.fake.script(
    {
      text: "Writing it.",
      toolCalls: [
        { name: "edit.write", args: { path: file, text: "one\n" } },
        { name: "edit.read", args: { path: file } },
      ],
    },
    {
      toolCalls: [
        { name: "tree.set", args: { key: `/notes/${vid}`, value: "noted" } },
        { name: "text.wc", args: { text: "one two three" } },
      ],
    },
    {
      toolCalls: [
        { name: "count.hit", args: { text: vid } },
        { name: "text.hi", args: { text: vid } },
      ],
    },
    // what the llm tool's own model call gets
    { text: `hi, ${vid}` },
    ...(wire.stream
      ? [{ text: "And the upstream.", toolCalls: [{ name: "askio.chatty", args: { n: 0 } }] }]
      : []),
    { text: "Done." },
  );
  const display = turnDisplay();
  const agent = wire.stream ? stack.bs.agent : (second as Byteseek).agent;
  const llm =
    wire.api === "anthropic" ? { llm: { api: "anthropic", url: stack.fake.url, model: "fake-1" } } : {};
  const result = await agent.runTurn({
    vid,
    input: `do everything (${vid})`,
    onEvent: display.onEvent,
    ...llm,
  });
  expect(result.reason, `${vid}: ${JSON.stringify(result.error)}`).toBe("done");
  expect(result.calls.map((c) => `${c.name} ${c.kind}`)).toEqual(callsOf(wire).map((n) => `${n} ok`));
  expect(stack.fake.requests.at(-1)).toMatchObject({ api: wire.api, stream: wire.stream });
  shown.set(vid, display.text());
}

function replay(vid: string): Promise<ReplayReport> {
  return replayRun({ tree: stack.bs.tree, runtime: stack.bs.runtime, logger: silent, vid });
}

/** Changes the JSON value at `key`, replays `vid`, puts the value back; answers the report. */
async function mutated(vid: string, key: string, change: (v: Record<string, unknown>) => void) {
  const node = await stack.tree.get(key);
  if (node?.kind !== "json") throw new Error(`no JSON at ${key}`);
  const was = node.value;
  const value = structuredClone(was.value) as Record<string, unknown>;
  change(value);
  await stack.tree.set(key, json(value as Json), { force: true });
  try {
    return await replay(vid);
  } finally {
    await stack.tree.set(key, was, { force: true });
  }
}

/** Where each step's answer, each call's record and each result sent to the model are stored. */
function places(t: RunTranscript) {
  const steps = t.turns.flatMap((turn) => turn.steps);
  return {
    answers: steps.map((s) => ({ step: s.index, key: `/byteseek/session/${t.vid}/${s.message}` })),
    calls: steps.flatMap((s) =>
      s.calls.map((c, i) => ({
        step: s.index,
        call: i + 1,
        record: c.record?.key as string,
        sent: `/byteseek/session/${t.vid}/${t.messages.findIndex((m) => m.role === "tool" && m.toolCallId === c.id && t.messages.indexOf(m) > s.message)}`,
      })),
    ),
  };
}

describe.each(WIRES)("a run recorded over $api (stream: $stream)", (wire) => {
  const { vid } = wire;
  const steps = wire.stream ? 5 : 4;
  it("replays with no tool execution and no model request, and shows the same turn", async () => {
    const requests = stack.fake.requests.length;
    const before = hits;
    const display = turnDisplay();
    const report = await replayRun({
      tree: stack.bs.tree,
      runtime: stack.bs.runtime,
      logger: silent,
      vid,
      onEvent: (e) => display.onEvent(e),
    });
    expect(report.divergence).toBeUndefined();
    expect(report.notes).toEqual([]);
    expect(report).toMatchObject({ steps, calls: callsOf(wire).length, executed: 0, modelRequests: 0 });
    expect(stack.fake.requests.length).toBe(requests);
    expect(hits).toBe(before);
    expect(display.text()).toBe(shown.get(vid));
  });

  it("says a changed tool result at exactly its step and call, in its record or in what the model was sent", async () => {
    const { calls } = places(await readTranscript(stack.tree, vid));
    expect(calls).toHaveLength(callsOf(wire).length);
    for (const c of calls) {
      const inRecord = await mutated(vid, c.record, (r) => {
        r.text = `${String(r.text)} (changed)`;
      });
      expect(inRecord.divergence, c.record).toMatchObject({
        kind: "result",
        step: c.step,
        call: c.call,
        record: c.record,
      });
      const inSession = await mutated(vid, c.sent, (m) => {
        m.content = `${String(m.content)} (changed)`;
      });
      expect(inSession.divergence, c.sent).toMatchObject({ kind: "result", step: c.step, call: c.call });
    }
  });

  it("says a changed model answer, its text or a call's arguments, at exactly its step", async () => {
    const { answers } = places(await readTranscript(stack.tree, vid));
    expect(answers).toHaveLength(steps);
    for (const a of answers) {
      const text = await mutated(vid, a.key, (m) => {
        m.text = `${String(m.text)} (changed)`;
      });
      expect(text.divergence, a.key).toMatchObject({ kind: "answer", step: a.step });
      const args = await mutated(vid, a.key, (m) => {
        const calls = m.toolCalls as Array<{ argsText: string }>;
        if (calls[0]) calls[0].argsText = '{"changed":true}';
        else m.text = "";
      });
      expect(args.divergence, a.key).toMatchObject({ kind: "answer", step: a.step });
    }
  });

  it("notes a changed prompt or declaration pin at exactly its step", async () => {
    const { answers, calls } = places(await readTranscript(stack.tree, vid));
    for (const a of answers) {
      const report = await mutated(vid, a.key, (m) => {
        (m.step as { prompt: string }).prompt = "0".repeat(64);
      });
      expect(report.divergence, a.key).toBeUndefined();
      expect(report.notes.map((n) => [n.kind, n.step])).toEqual([["prompt", a.step]]);
    }
    for (const c of calls) {
      const report = await mutated(vid, c.record, (r) => {
        (r.decl as { hash: string }).hash = "0".repeat(64);
      });
      expect(report.divergence, c.record).toBeUndefined();
      expect(report.notes.map((n) => [n.kind, n.step])).toEqual([["declaration", c.step]]);
    }
  });
});
