import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { anthropicError, anthropicJson, anthropicStream } from "./anthropic-wire.js";
import { normaliseRequest } from "./normalise.js";
import { openAiError, openAiJson, openAiStream } from "./openai-wire.js";
import type { FakeLlm, FakeReply, FakeReplyObject, FakeRequest, Planned } from "./types.js";

export type {
  FakeLlm,
  FakeMessage,
  FakeReply,
  FakeReplyObject,
  FakeRequest,
  FakeTool,
  FakeToolCall,
} from "./types.js";

/**
 * A fake model server: real HTTP on 127.0.0.1, speaking OpenAI chat completions
 * (`POST …/chat/completions`) and Anthropic messages (`POST …/v1/messages`), streaming (SSE) or
 * not (as the request's `stream` asks), answering a script of replies in order.
 *
 * Point an OpenAI-compatible client at `${url}/v1` and an Anthropic one at `url`.
 *
 * ```ts
 * const fake = await startFakeLlm();
 * fake.script(
 *   { toolCalls: [{ name: "edit.replace", args: { path: "a.txt", old: "x", new: "y" } }] },
 *   (req) => ({ text: req.messages.at(-1)?.role === "tool" ? "done" : "?" }),
 * );
 * // … run the code under test against BYTESEEK_LLM_URL=`${fake.url}/v1` …
 * expect(fake.requests[1]?.system).toContain("[previous tool results]");
 * await fake.close();
 * ```
 */
export async function startFakeLlm(): Promise<FakeLlm> {
  const queue: FakeReply[] = [];
  const requests: FakeRequest[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `fake-llm crashed: ${String(err)}` } }));
      } else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    const api =
      req.method !== "POST"
        ? undefined
        : path.endsWith("/chat/completions")
          ? "openai"
          : path.endsWith("/v1/messages")
            ? "anthropic"
            : undefined;
    const rawBody = await readBody(req);
    if (api === undefined) {
      sendJson(res, 404, { error: { message: `fake-llm: no route ${req.method} ${path}` } });
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(rawBody) as Record<string, unknown>;
    } catch {
      sendJson(res, 400, { error: { message: "fake-llm: the request body is not JSON" } });
      return;
    }
    const request = normaliseRequest(
      api,
      path,
      headersOf(req.headers),
      body,
      requests.length,
      req.socket.remotePort ?? 0,
    );
    requests.push(request);

    const next = queue.shift();
    if (next === undefined) {
      const message = `fake-llm: the script is empty: no reply scripted for request #${request.index} (${api} ${path})`;
      sendJson(res, 500, api === "openai" ? openAiError(message, 500) : anthropicError(message, 500));
      return;
    }
    const reply: FakeReplyObject = typeof next === "function" ? await next(request) : next;
    await answer(request, reply, rawBody.length, res);
  }

  return {
    url: `http://127.0.0.1:${await listen(server)}`,
    requests,
    script(...replies) {
      queue.push(...replies);
    },
    pending: () => queue.length,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function answer(request: FakeRequest, reply: FakeReplyObject, bodyBytes: number, res: ServerResponse) {
  const { api } = request;
  if (reply.hold === "headers") return; // Never answer; close() ends it.

  if (reply.status !== undefined && reply.status >= 400) {
    const headers: Record<string, string> = { "content-type": "application/json", ...reply.headers };
    if (reply.retryAfter !== undefined) headers["retry-after"] = String(reply.retryAfter);
    const message = reply.message ?? `fake-llm: scripted ${reply.status}`;
    res.writeHead(reply.status, headers);
    res.end(
      JSON.stringify(
        api === "openai" ? openAiError(message, reply.status) : anthropicError(message, reply.status),
      ),
    );
    return;
  }

  const planned = plan(request, reply, bodyBytes);
  let pieces: string[];
  let contentType: string;
  if (reply.raw !== undefined) {
    pieces = [reply.raw];
    contentType = request.stream ? "text/event-stream" : "application/json";
  } else if (request.stream) {
    const events = api === "openai" ? openAiStream(request, planned) : anthropicStream(request, planned);
    // Holding the body: send the content, never the end.
    pieces = reply.hold === "body" ? events.content : [...events.content, ...events.end];
    contentType = "text/event-stream";
  } else {
    pieces = [
      JSON.stringify(api === "openai" ? openAiJson(request, planned) : anthropicJson(request, planned)),
    ];
    contentType = "application/json";
  }

  res.writeHead(reply.status ?? 200, {
    "content-type": contentType,
    "cache-control": "no-cache",
    ...reply.headers,
  });
  res.flushHeaders();
  if (reply.cutAfterBytes !== undefined) {
    const bytes = Buffer.from(pieces.join("")).subarray(0, reply.cutAfterBytes);
    if (bytes.length > 0) await write(res, bytes);
    res.socket?.destroy();
    return;
  }
  for (const piece of pieces) await write(res, piece);
  if (reply.hold !== "body") res.end();
}

/** The reply with its defaults filled in: safe names chosen from the request's tools, ids, usage. */
function plan(request: FakeRequest, reply: FakeReplyObject, bodyBytes: number): Planned {
  const text = reply.text ?? "";
  const calls = (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `${request.api === "openai" ? "call" : "toolu"}_${request.index}_${i}`,
    name: pickToolName(call.name, request),
    argsText: call.argsText ?? JSON.stringify(call.args ?? {}),
  }));
  const stop = reply.stop ?? (calls.length > 0 ? "tool_calls" : "stop");
  const outputChars = text.length + calls.reduce((n, c) => n + c.argsText.length, 0);
  return {
    text,
    calls,
    stop,
    chunkSize: Math.max(1, reply.chunkSize ?? 4),
    sharedCallIndex: reply.sharedCallIndex === true,
    usage: reply.usage ?? {
      inputTokens: Math.ceil(bodyBytes / 4),
      outputTokens: Math.max(1, Math.ceil(outputChars / 4)),
    },
  };
}

/**
 * The name a model would send for one of our tool names: the request's tool of that exact name,
 * else the one whose name is ours with the unsafe characters as `_`, else the name unchanged
 * (a call of a tool that was not offered).
 */
function pickToolName(name: string, request: FakeRequest): string {
  const offered = request.tools.map((t) => t.name);
  if (offered.includes(name)) return name;
  const safe = name.replace(/[^a-zA-Z0-9_-]/g, "_");
  return offered.includes(safe) ? safe : name;
}

function write(res: ServerResponse, chunk: string | Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) resolve();
    else res.write(chunk, () => resolve());
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (chunk: Buffer) => parts.push(chunk));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = String(value);
  return out;
}

function listen(server: ReturnType<typeof createServer>): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}
