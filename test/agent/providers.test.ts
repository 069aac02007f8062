// Over 400 lines: both wire formats go through the same cases (describe.each) against one fake LLM server; a split would repeat that set-up.
import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type LlmConfig, resolveLlmConfig } from "../../agent/llm-config.js";
import {
  type ChatMessage,
  type ChatRequest,
  createProvider,
  type Provider,
  type ProviderDeps,
  type StreamEvent,
  type ToolSchema,
} from "../../agent/providers/index.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { agentFailure } from "./helpers.js";

const KEY = "sk-test-0123456789abcdef";
const FAST_RETRY = { baseDelayMs: 2, maxDelayMs: 10 };

const TOOLS: ToolSchema[] = [
  {
    name: "edit.replace",
    description: "Replace one exact occurrence of old text in a file.",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, old: { type: "string" }, new: { type: "string" } },
      required: ["path", "old", "new"],
    },
  },
  {
    name: "tree.get",
    description: "Read one tree key.",
    parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  },
];

let fake: FakeLlm;
const opened: Provider[] = [];

beforeEach(async () => {
  fake = await startFakeLlm();
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((p) => p.close()));
  await fake.close();
});

async function configFor(
  api: "openai" | "anthropic",
  env: Record<string, string> = {},
  url = api === "openai" ? `${fake.url}/v1` : fake.url,
): Promise<LlmConfig> {
  return resolveLlmConfig({
    env: {
      BYTESEEK_LLM_API: api,
      BYTESEEK_LLM_URL: url,
      BYTESEEK_LLM_MODEL: "test-model",
      BYTESEEK_LLM_KEY: KEY,
      BYTESEEK_LLM_MAX_TOKENS: "1000",
      BYTESEEK_LLM_MAX_RETRIES: "2",
      ...env,
    },
  });
}

async function providerFor(
  api: "openai" | "anthropic",
  env: Record<string, string> = {},
  deps: ProviderDeps = {},
  url?: string,
): Promise<Provider> {
  const provider = createProvider(await configFor(api, env, url), { retry: FAST_RETRY, ...deps });
  opened.push(provider);
  return provider;
}

function request(messages: ChatMessage[] = [{ role: "user", content: "hello" }], tools = TOOLS): ChatRequest {
  return { system: "You are byteseek's test agent.", messages, tools };
}

async function ask(provider: Provider, req: ChatRequest = request(), signal = neverAborted()) {
  const events: StreamEvent[] = [];
  const response = await provider.complete(req, { signal, onEvent: (e) => events.push(e) });
  return { response, events };
}

function neverAborted(): AbortSignal {
  return new AbortController().signal;
}

function deltasOf(events: StreamEvent[], index: number): string[] {
  return events.flatMap((e) => (e.type === "toolcall_delta" && e.index === index ? [e.delta] : []));
}

describe.each(["openai", "anthropic"] as const)("%s provider", (api) => {
  describe("replies", () => {
    it("streams a plain text answer as deltas and reports usage", async () => {
      const provider = await providerFor(api);
      fake.script({ text: "The answer is forty-two.", usage: { inputTokens: 31, outputTokens: 7 } });

      const { response, events } = await ask(provider);

      expect(response).toEqual({
        text: "The answer is forty-two.",
        toolCalls: [],
        stopReason: "stop",
        usage: { inputTokens: 31, outputTokens: 7 },
      });
      const deltas = events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : []));
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.join("")).toBe(response.text);
      expect(events.at(-1)).toEqual({ type: "done", response });
      expect(fake.requests[0]?.stream).toBe(true);
    });

    it("reads a whole JSON reply when asked not to stream", async () => {
      const provider = await providerFor(api, {}, { stream: false });
      fake.script({
        text: "Reading it.",
        toolCalls: [{ name: "tree.get", args: { key: "/a" } }],
        usage: { inputTokens: 5, outputTokens: 3 },
      });

      const { response, events } = await ask(provider);

      expect(fake.requests[0]?.stream).toBe(false);
      expect(response.text).toBe("Reading it.");
      expect(response.toolCalls).toEqual([
        { id: expect.any(String), name: "tree.get", argsText: '{"key":"/a"}' },
      ]);
      expect(response.stopReason).toBe("tool_calls");
      expect(response.usage).toEqual({ inputTokens: 5, outputTokens: 3 });
      expect(events.map((e) => e.type)).toEqual(["text_delta", "toolcall_start", "toolcall_delta", "done"]);
    });

    it("sends the model, system text, messages, token limit and tools with provider-safe names", async () => {
      const provider = await providerFor(api);
      fake.script({ text: "ok" });

      await ask(provider, { ...request(), maxTokens: 77 });

      const sent = fake.requests[0]!;
      expect(sent.model).toBe("test-model");
      expect(sent.system).toBe("You are byteseek's test agent.");
      expect(sent.messages).toEqual([{ role: "user", text: "hello" }]);
      expect(sent.maxTokens).toBe(77);
      expect(sent.tools.map((t) => t.name)).toEqual(["edit_replace", "tree_get"]);
      expect(sent.tools[0]?.description).toBe(TOOLS[0]?.description);
      expect(sent.tools[0]?.parameters).toEqual(TOOLS[0]?.parameters);
      if (api === "openai") {
        expect(sent.path).toBe("/v1/chat/completions");
        expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
        expect(sent.body.stream_options).toEqual({ include_usage: true });
      } else {
        expect(sent.path).toBe("/v1/messages");
        expect(sent.headers["x-api-key"]).toBe(KEY);
        expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
      }
    });

    it("uses the configured token limit when the request sets none", async () => {
      const provider = await providerFor(api);
      fake.script({ text: "ok" });
      await ask(provider);
      expect(fake.requests[0]?.maxTokens).toBe(1000);
    });

    it("reuses keep-alive connections across calls", async () => {
      const provider = await providerFor(api);
      fake.script({ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" });
      for (let i = 0; i < 4; i++) await ask(provider);
      const ports = new Set(fake.requests.map((r) => r.remotePort));
      expect(ports.size).toBeLessThan(4);
    });
  });

  describe("tool calls", () => {
    it("returns a single call under our dotted name", async () => {
      const provider = await providerFor(api);
      fake.script({ toolCalls: [{ name: "edit.replace", args: { path: "a.txt", old: "x", new: "y" } }] });

      const { response, events } = await ask(provider);

      expect(response.stopReason).toBe("tool_calls");
      expect(response.toolCalls).toEqual([
        { id: expect.any(String), name: "edit.replace", argsText: '{"path":"a.txt","old":"x","new":"y"}' },
      ]);
      expect(events).toContainEqual({
        type: "toolcall_start",
        index: 0,
        id: response.toolCalls[0]?.id,
        name: "edit.replace",
      });
    });

    it("assembles several calls whose arguments arrive in pieces", async () => {
      const provider = await providerFor(api);
      fake.script({
        text: "Two things.",
        chunkSize: 3,
        toolCalls: [
          { name: "tree.get", args: { key: "/byteseek/prompt/system" } },
          { name: "edit.replace", args: { path: "notes.md", old: "teh", new: "the" } },
        ],
      });

      const { response, events } = await ask(provider);

      expect(response.text).toBe("Two things.");
      expect(response.toolCalls.map((c) => [c.name, JSON.parse(c.argsText)])).toEqual([
        ["tree.get", { key: "/byteseek/prompt/system" }],
        ["edit.replace", { path: "notes.md", old: "teh", new: "the" }],
      ]);
      expect(new Set(response.toolCalls.map((c) => c.id)).size).toBe(2);
      for (const [index, call] of response.toolCalls.entries()) {
        const deltas = deltasOf(events, index);
        expect(deltas.length).toBeGreaterThan(1);
        expect(deltas.join("")).toBe(call.argsText);
      }
    });

    it("starts a new call when a new id arrives on an index already in use (parallel calls under one index)", async () => {
      const provider = await providerFor(api);
      fake.script({
        chunkSize: 5,
        sharedCallIndex: true,
        toolCalls: [
          { id: "call_a", name: "tree.get", args: { key: "/a" } },
          { id: "call_b", name: "edit.replace", args: { path: "n.md", old: "x", new: "y" } },
        ],
      });

      const { response, events } = await ask(provider);

      expect(response.toolCalls).toEqual([
        { id: "call_a", name: "tree.get", argsText: '{"key":"/a"}' },
        { id: "call_b", name: "edit.replace", argsText: '{"path":"n.md","old":"x","new":"y"}' },
      ]);
      expect(deltasOf(events, 1).join("")).toBe('{"path":"n.md","old":"x","new":"y"}');
    });

    it("keeps a half-written call as text when the reply stops for length", async () => {
      const provider = await providerFor(api);
      const half = '{"path": "src/main.ts", "old": "function ma';
      fake.script({
        stop: "length",
        text: "Let me fix it.",
        toolCalls: [{ name: "edit.replace", argsText: half }],
      });

      const { response } = await ask(provider);

      expect(response.stopReason).toBe("length");
      expect(response.toolCalls).toEqual([{ id: expect.any(String), name: "edit.replace", argsText: half }]);
    });

    it("reports a plain length stop without tool calls", async () => {
      const provider = await providerFor(api);
      fake.script({ stop: "length", text: "I was saying" });
      const { response } = await ask(provider);
      expect(response).toMatchObject({ stopReason: "length", text: "I was saying", toolCalls: [] });
    });

    it("maps our names in the conversation to safe names and the model's safe names back", async () => {
      const provider = await providerFor(api);
      const history: ChatMessage[] = [
        { role: "user", content: "fix the typo" },
        {
          role: "assistant",
          text: "Trying.",
          toolCalls: [{ id: "call_1", name: "edit.replace", argsText: '{"path":"a","old":"x","new":"y"}' }],
        },
        {
          role: "tool",
          toolCallId: "call_1",
          name: "edit.replace",
          content: "old text occurs 3 times",
          isError: true,
        },
      ];
      fake.script({ toolCalls: [{ name: "edit.replace", args: { path: "a", old: "x = 1", new: "y = 1" } }] });

      const { response } = await ask(provider, request(history));

      const sent = fake.requests[0]!;
      expect(sent.messages).toEqual([
        { role: "user", text: "fix the typo" },
        {
          role: "assistant",
          text: "Trying.",
          toolCalls: [{ id: "call_1", name: "edit_replace", argsText: '{"path":"a","old":"x","new":"y"}' }],
        },
        {
          role: "tool",
          toolCallId: "call_1",
          text: "old text occurs 3 times",
          ...(api === "anthropic" ? { isError: true } : {}),
        },
      ]);
      expect(response.toolCalls[0]?.name).toBe("edit.replace");
    });

    it("keeps two names that sanitise alike apart, both ways", async () => {
      const provider = await providerFor(api);
      const tools: ToolSchema[] = [
        { name: "a.b", description: "the dotted one", parameters: { type: "object" } },
        { name: "a_b", description: "the underscored one", parameters: { type: "object" } },
      ];
      // A model picks a tool by what its description says, and calls it by the name it was given.
      fake.script((req) => ({
        toolCalls: ["the dotted one", "the underscored one"].map((d) => ({
          name: req.tools.find((t) => t.description === d)!.name,
          args: {},
        })),
      }));

      const { response } = await ask(provider, request(undefined, tools));

      const safeNames = fake.requests[0]!.tools.map((t) => t.name);
      expect(new Set(safeNames).size).toBe(2);
      for (const name of safeNames) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(response.toolCalls.map((c) => c.name)).toEqual(["a.b", "a_b"]);
    });

    it("passes a tool name the model made up through unchanged", async () => {
      const provider = await providerFor(api);
      fake.script({ toolCalls: [{ name: "shell_run", args: {} }] });
      const { response } = await ask(provider);
      expect(response.toolCalls[0]?.name).toBe("shell_run");
    });
  });

  describe("retries", () => {
    it("retries a 429 after the Retry-After the server asked for, then succeeds", async () => {
      const provider = await providerFor(api);
      fake.script({ status: 429, retryAfter: 1, message: "slow down" }, { text: "made it" });

      const { response, events } = await ask(provider);

      expect(response.text).toBe("made it");
      expect(fake.requests).toHaveLength(2);
      expect(events[0]).toMatchObject({ type: "retry", attempt: 1, delayMs: 1000, status: 429 });
      expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
    });

    it("fails at once when Retry-After is longer than it will wait", async () => {
      const provider = await providerFor(api);
      fake.script({ status: 429, retryAfter: 3600 });

      const err = await agentFailure(ask(provider));

      expect(err.code).toBe("LLM_RATE_LIMITED");
      expect(err.message).toContain("3600 s");
      expect(fake.requests).toHaveLength(1);
    });

    it("gives up on 429 after the configured retries with LLM_RATE_LIMITED", async () => {
      const provider = await providerFor(api);
      fake.script({ status: 429 }, { status: 429 }, { status: 429 }, { text: "too late" });

      const err = await agentFailure(ask(provider));

      expect(err.code).toBe("LLM_RATE_LIMITED");
      expect(fake.requests).toHaveLength(3);
    });

    it("retries 5xx with backoff and fails clearly when it never recovers", async () => {
      const provider = await providerFor(api);
      fake.script(...Array.from({ length: 3 }, () => ({ status: 500, message: "upstream exploded" })));

      const { events, err } = await (async () => {
        const events: StreamEvent[] = [];
        const err = await agentFailure(
          provider.complete(request(), { signal: neverAborted(), onEvent: (e) => events.push(e) }),
        );
        return { events, err };
      })();

      expect(err.code).toBe("LLM_HTTP");
      expect(err.details).toMatchObject({ status: 500, attempts: 3 });
      expect(err.message).toContain("upstream exploded");
      expect(err.message).toContain("gave up after 3 attempts");
      expect(fake.requests).toHaveLength(3);
      expect(events.map((e) => e.type)).toEqual(["retry", "retry"]);
    });

    it("answers a request the script did not plan for with a clear 500", async () => {
      const provider = await providerFor(api, { BYTESEEK_LLM_MAX_RETRIES: "0" });
      const err = await agentFailure(ask(provider));
      expect(err.code).toBe("LLM_HTTP");
      expect(err.message).toContain("the script is empty");
    });

    it("does not retry a client error, and names the setting to check", async () => {
      const provider = await providerFor(api);
      fake.script({ status: 401, message: "invalid credentials" }, { text: "never" });

      const err = await agentFailure(ask(provider));

      expect(err.code).toBe("LLM_HTTP");
      expect(err.details.status).toBe(401);
      expect(err.message).toContain("BYTESEEK_LLM_KEY");
      expect(fake.requests).toHaveLength(1);
    });

    it("retries when the connection drops before any byte of the reply", async () => {
      const provider = await providerFor(api);
      fake.script({ text: "lost", cutAfterBytes: 0 }, { text: "second time lucky" });

      const { response } = await ask(provider);

      expect(response.text).toBe("second time lucky");
      expect(fake.requests).toHaveLength(2);
    });

    it("fails with LLM_NETWORK, naming BYTESEEK_LLM_URL, when nothing listens", async () => {
      const closed = await startFakeLlm();
      const url = closed.url;
      await closed.close();
      const provider = await providerFor(api, { BYTESEEK_LLM_MAX_RETRIES: "1" }, {}, url);

      const err = await agentFailure(ask(provider));

      expect(err.code).toBe("LLM_NETWORK");
      expect(err.details.attempts).toBe(2);
      expect(err.message).toContain("BYTESEEK_LLM_URL");
    });
  });

  describe("broken replies", () => {
    it("fails with LLM_STREAM_CUT when the stream is cut mid-way, without retrying", async () => {
      const provider = await providerFor(api);
      fake.script(
        { text: "a long answer that will not arrive whole ".repeat(20), cutAfterBytes: 900 },
        { text: "no" },
      );

      const events: StreamEvent[] = [];
      const err = await agentFailure(
        provider.complete(request(), { signal: neverAborted(), onEvent: (e) => events.push(e) }),
      );

      expect(err.code).toBe("LLM_STREAM_CUT");
      expect(err.message).toContain("cut off");
      expect(events.some((e) => e.type === "text_delta")).toBe(true);
      expect(events.some((e) => e.type === "done")).toBe(false);
      expect(fake.requests).toHaveLength(1);
    });

    it("fails with LLM_STREAM_CUT when a whole JSON reply is cut", async () => {
      const provider = await providerFor(api, {}, { stream: false });
      fake.script({ text: "x".repeat(500), cutAfterBytes: 100 });
      const err = await agentFailure(ask(provider));
      expect(err.code).toBe("LLM_STREAM_CUT");
    });

    it("fails with LLM_STREAM_CUT when the stream ends cleanly before its end", async () => {
      const provider = await providerFor(api);
      const firstEvent =
        api === "openai"
          ? `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "half" }, finish_reason: null }] })}\n\n`
          : `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 1 } } })}\n\n`;
      fake.script({ raw: firstEvent });

      const err = await agentFailure(ask(provider));

      expect(err.code).toBe("LLM_STREAM_CUT");
      expect(err.message).toContain("ended before it was complete");
    });

    it("fails with LLM_BAD_RESPONSE on a reply that is not the wire format", async () => {
      const provider = await providerFor(api);
      fake.script({ raw: "data: {this is not json\n\n" });
      const err = await agentFailure(ask(provider));
      expect(err.code).toBe("LLM_BAD_RESPONSE");
    });
  });

  describe("abort and timeout", () => {
    it("stops a reply mid-stream when the signal aborts", async () => {
      const provider = await providerFor(api);
      fake.script({ text: "streaming forever", hold: "body" });
      const controller = new AbortController();

      const err = await agentFailure(
        provider.complete(request(), {
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === "text_delta") controller.abort();
          },
        }),
      );

      expect(err.code).toBe("LLM_ABORTED");
    });

    it("stops waiting between retries when the signal aborts", async () => {
      const provider = await providerFor(api);
      fake.script({ status: 503, retryAfter: 30 }, { text: "never asked" });
      const controller = new AbortController();

      const err = await agentFailure(
        provider.complete(request(), {
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === "retry") controller.abort();
          },
        }),
      );

      expect(err.code).toBe("LLM_ABORTED");
      expect(fake.requests).toHaveLength(1);
    });

    it("sends nothing when the signal is already aborted", async () => {
      const provider = await providerFor(api);
      const err = await agentFailure(provider.complete(request(), { signal: AbortSignal.abort() }));
      expect(err.code).toBe("LLM_ABORTED");
      expect(fake.requests).toHaveLength(0);
    });

    it("times out with LLM_TIMEOUT when no reply comes", async () => {
      const provider = await providerFor(api, {
        BYTESEEK_LLM_TIMEOUT_MS: "150",
        BYTESEEK_LLM_MAX_RETRIES: "0",
      });
      fake.script({ hold: "headers" });
      const err = await agentFailure(ask(provider));
      expect(err.code).toBe("LLM_TIMEOUT");
      expect(err.message).toContain("150 ms");
    });

    it("times out with LLM_TIMEOUT when the reply stalls mid-way", async () => {
      const provider = await providerFor(api, { BYTESEEK_LLM_TIMEOUT_MS: "150" });
      fake.script({ text: "and then", hold: "body" }, { text: "never asked" });
      const err = await agentFailure(ask(provider));
      expect(err.code).toBe("LLM_TIMEOUT");
      expect(fake.requests).toHaveLength(1);
    });

    it("retries a request that timed out before its reply began", async () => {
      const provider = await providerFor(api, {
        BYTESEEK_LLM_TIMEOUT_MS: "150",
        BYTESEEK_LLM_MAX_RETRIES: "3",
      });
      // Spare replies: on a loaded machine a retry may itself be slow, and is retried in turn.
      fake.script({ hold: "headers" }, { text: "awake now" }, { text: "awake now" }, { text: "awake now" });
      const { response } = await ask(provider);
      expect(response.text).toBe("awake now");
    });
  });

  describe("the key", () => {
    it("never appears in an error, its details, its cause, or the logs", async () => {
      const lines: string[] = [];
      const { pino } = await import("pino");
      const logger = pino({ level: "trace" }, { write: (line: string) => void lines.push(line) });
      const provider = await providerFor(api, {}, { logger });
      fake.script(
        { status: 500, message: `key ${KEY} is on fire` },
        { status: 401, message: `the key ${KEY} is not valid` },
      );

      const err = await agentFailure(ask(provider));

      expect(err.message).toContain("[redacted]");
      const everything = [
        err.message,
        JSON.stringify(err),
        JSON.stringify(err.details),
        inspect(err, { depth: 10 }),
        ...lines,
      ];
      for (const text of everything) expect(text).not.toContain(KEY);
      expect(lines.length).toBeGreaterThan(0);
      expect(inspect(provider, { depth: 10 })).not.toContain(KEY);
    });
  });
});
