/**
 * Streamable HTTP for both protocol eras, as web-standard Request → Response (the fastify route in
 * server/routes/mcp.ts adapts it, after the app's hooks — token, Host/Origin — ran):
 * - 2026-07-28 requests (a per-request `_meta` envelope) go to the SDK's stateless handler, one
 *   instance per request; list changes reach clients on their `subscriptions/listen` streams.
 * - 2025-era traffic (initialize, then `Mcp-Session-Id`) gets a session: one instance and one
 *   transport each, so `notifications/*_changed` reach the client on its GET stream and
 *   elicitation (`elicitation/create`) can ask mid-call. Sessions end on DELETE; a session idle
 *   for `sessionIdleMs` (no request, and no response or notification stream open — a host
 *   listening on its GET stream is not idle) is closed, as hosts often go without DELETE; and the
 *   least recently used one is closed when `maxSessions` are open. A plain `tools/call` on a
 *   session whose client cannot be asked is answered without the session's transport and
 *   instance (`sessionCall`, mcp/fast-call.ts); the session is kept busy and used as the SDK would.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Logger } from "pino";
import { fastLanesByDefault } from "../tree/fast-lanes.js";
import { encodeSessionAnswer, plainToolCall, type SessionToolCall, sessionToolCall } from "./fast-call.js";
import type { LiveTree } from "./live.js";
import { notifyInstances } from "./notify.js";
import { keyToUri } from "./resources.js";
import type { McpFactory, McpInstance } from "./server.js";
import type { SessionRun } from "./session-run.js";

export interface McpHttpOptions {
  factory: McpFactory;
  live: LiveTree;
  logger: Logger;
  /** 2025-era sessions kept open at once (default 256). */
  maxSessions?: number;
  /** A 2025-era session idle this long (ms) is closed (default 30 minutes; 0: only DELETE or the LRU bound end one). */
  sessionIdleMs?: number;
  /**
   * Plain `tools/call`s answered beside the SDK (`plainCall`, `sessionCall`: the MCP fast lane);
   * false: both answer undefined and `handle` (the SDK, the reference lane) serves everything.
   * Default: BYTESEEK_FAST (on; tree/fast-lanes.ts).
   */
  fast?: boolean;
}

export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  instance: McpInstance;
  /** The run its calls belong to (from the initialize request's `?vid=`). */
  vid: string | undefined;
  /** Its run, made at its first call (mcp-<client>-<n>), when `vid` names none. */
  run?: SessionRun;
  /** Answered with one JSON body per request (its client cannot be asked), not SSE streams. */
  json: boolean;
  /** Calls answered by `sessionCall` still running, by JSON-RPC id: cancelled as the SDK cancels its own. */
  calls: Map<string | number, AbortController>;
  /** When its last request came or its last stream ended (ms, monotonic). */
  usedAt: number;
  /** Requests being answered and response streams still open. */
  open: number;
}

export interface McpHttp {
  /** Answers one request to the MCP endpoint; `vid` is the run its calls belong to (from `?vid=`). */
  handle(request: Request, parsedBody: unknown, vid?: string): Promise<Response>;
  /**
   * Answers a plain 2026-era `tools/call` (mcp/fast-call.ts) with its JSON body, without an SDK
   * instance; undefined (at once, nothing done) for any other request, which goes to `handle`.
   */
  plainCall(
    method: string,
    headers: IncomingHttpHeaders,
    parsedBody: unknown,
    vid: string | undefined,
    signal: AbortSignal,
  ): Promise<string> | undefined;
  /**
   * Answers a plain `tools/call` on a live 2025-era session answered with JSON bodies
   * (mcp/fast-call.ts) without its transport and instance: the session id to send back and the
   * JSON body. Undefined (at once, nothing done) for any other request — an unknown or closed
   * session among them — which goes to `handle`. `abort` is aborted by a `notifications/cancelled`
   * naming the call or by the session's end, as the SDK aborts the calls it runs.
   */
  sessionCall(
    method: string,
    headers: IncomingHttpHeaders,
    parsedBody: unknown,
    abort: AbortController,
  ): { session: string; answer: Promise<string> } | undefined;
  /** Ends every session and stream. */
  close(): Promise<void>;
}

/** Whether an initialize request declares that its client can be asked (elicitation). */
function canBeAsked(initialize: unknown): boolean {
  const params = (initialize as { params?: { capabilities?: { elicitation?: unknown } } }).params;
  return params?.capabilities?.elicitation !== undefined;
}

/** Aborts the calls `body` cancels (`notifications/cancelled`, alone or in a batch) among `s`'s own. */
function cancelCalls(s: Session, body: unknown) {
  if (s.calls.size === 0) return;
  for (const m of Array.isArray(body) ? body : [body]) {
    const msg = m as { method?: unknown; params?: { requestId?: unknown; reason?: unknown } } | null;
    if (msg?.method !== "notifications/cancelled") continue;
    const id = msg.params?.requestId;
    if (typeof id === "string" || typeof id === "number") s.calls.get(id)?.abort(msg.params?.reason);
  }
}

function rpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

export function createMcpHttp(options: McpHttpOptions): McpHttp {
  const { factory, live, logger } = options;
  const maxSessions = options.maxSessions ?? 256;
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const fast = options.fast ?? fastLanesByDefault();
  // Insertion order is use order: a session is moved to the end each time it is used.
  const sessions = new Map<string, Session>();
  const onerror = (err: Error) => logger.debug({ err }, "MCP request refused");
  const modern = createMcpHandler(
    (ctx) => {
      const vid = ctx.requestInfo
        ? (new URL(ctx.requestInfo.url).searchParams.get("vid") ?? undefined)
        : undefined;
      return factory.create({ era: ctx.era, track: false, ...(vid ? { vid } : {}) }).server;
    },
    { legacy: "reject", onerror },
  );
  let unsubscribe: (() => void) | undefined;
  let sweeper: NodeJS.Timeout | undefined;

  function endSession(id: string, s: Session, why: string) {
    sessions.delete(id);
    logger.info({ session: id }, why);
    void s.transport.close();
  }

  /** Closes the sessions idle beyond the bound; runs while any session is open. */
  function sweep() {
    const now = performance.now();
    for (const [id, s] of sessions)
      if (s.open === 0 && now - s.usedAt >= idleMs)
        endSession(id, s, `closing an MCP session idle for ${Math.round(idleMs / 1000)} s`);
    if (sessions.size === 0) stopSweeping();
  }

  function startSweeping() {
    if (idleMs > 0 && sweeper === undefined)
      sweeper = setInterval(sweep, Math.min(Math.max(idleMs / 4, 10), 60_000)).unref();
  }

  function stopSweeping() {
    clearInterval(sweeper);
    sweeper = undefined;
  }

  /** Counts `s` busy until `res`'s body (an SSE stream, or nothing) is done. */
  function tracked(s: Session, res: Response): Response {
    const done = () => {
      s.open--;
      s.usedAt = performance.now();
    };
    if (res.body === null) {
      done();
      return res;
    }
    const reader = res.body.getReader();
    let finished = false;
    const finish = () => {
      if (!finished) {
        finished = true;
        done();
      }
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done: end, value } = await reader.read();
          if (end) {
            finish();
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          finish();
          controller.error(err);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  /** Answers `request` on session `s`, keeping it busy meanwhile. */
  async function onSession(s: Session, request: Request, parsedBody: unknown): Promise<Response> {
    s.open++;
    s.usedAt = performance.now();
    let res: Response;
    try {
      res = await s.transport.handleRequest(request, { parsedBody });
    } catch (err) {
      s.open--;
      throw err;
    }
    return tracked(s, res);
  }

  function follow() {
    unsubscribe ??= live.subscribe(function onTreeChange(change) {
      notifyInstances(
        [...sessions.values()].map((s) => s.instance),
        change,
      );
      if (change.tools) modern.notify.toolsChanged();
      if (change.prompts) modern.notify.promptsChanged();
      if (change.resources) modern.notify.resourcesChanged();
      for (const key of change.keys) modern.notify.resourceUpdated(keyToUri(key));
    });
  }

  async function openSession(request: Request, parsedBody: unknown, vid?: string): Promise<Response> {
    if (sessions.size >= maxSessions) {
      const [oldest, s] = sessions.entries().next().value as [string, Session];
      endSession(oldest, s, "closing the least recently used MCP session");
    }
    // a session of its own: its calls are one run (mcp-<client>-<n>), unless ?vid= names one
    const run = vid ? undefined : factory.newSession("http");
    const instance = factory.create({
      era: "legacy",
      ...(vid ? { vid } : {}),
      ...(run ? { session: run } : {}),
    });
    const json = !canBeAsked(parsedBody);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // The only message byteseek sends in the middle of a call is elicitation/create: a client that
      // cannot be asked gets each answer as one JSON body (the spec's other shape), not an SSE stream.
      // Notifications still reach it on its GET stream.
      enableJsonResponse: json,
      onsessioninitialized(id) {
        sessions.set(id, session);
        startSweeping();
      },
      onsessionclosed(id) {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      // As the SDK's instance aborts the calls it runs when its transport closes.
      for (const abort of session.calls.values()) abort.abort(new Error("the MCP session closed"));
    };
    const session: Session = {
      transport,
      instance,
      // As the instance takes it: an empty vid is none.
      vid: vid || undefined,
      ...(run ? { run } : {}),
      json,
      calls: new Map(),
      usedAt: performance.now(),
      open: 1,
    };
    await instance.server.connect(transport);
    let res: Response;
    try {
      res = await transport.handleRequest(request, { parsedBody });
    } catch (err) {
      session.open--;
      throw err;
    }
    return tracked(session, res);
  }

  /** `call` on session `s`, as its instance would run it (the session busy meanwhile). */
  async function answerOnSession(s: Session, call: SessionToolCall, abort: AbortController): Promise<string> {
    const { server } = s.instance;
    try {
      const result = await factory.callTool(
        call.name,
        call.args,
        {
          clientInfo: () => server.getClientVersion(),
          clientCaps: () => server.getClientCapabilities(),
          signal: abort.signal,
          requestState: () => undefined,
        },
        s.vid ?? (await s.run?.vid(server.getClientVersion())),
      );
      return encodeSessionAnswer(call.id, { result });
    } catch (err) {
      onerror(err as Error);
      return encodeSessionAnswer(call.id, { error: err });
    } finally {
      if (s.calls.get(call.id) === abort) s.calls.delete(call.id);
      s.open--;
      s.usedAt = performance.now();
    }
  }

  return {
    sessionCall(method, headers, parsedBody, abort) {
      if (!fast) return undefined;
      const sid = headers["mcp-session-id"];
      if (typeof sid !== "string") return undefined;
      const s = sessions.get(sid);
      if (s === undefined || !s.json) return undefined;
      const call = sessionToolCall(
        method,
        headers,
        parsedBody,
        s.instance.server.getNegotiatedProtocolVersion(),
      );
      // An id still running on this session is left to the SDK, which answers it as it does.
      if (call === undefined || s.calls.has(call.id)) return undefined;
      sessions.delete(sid);
      sessions.set(sid, s);
      s.open++;
      s.usedAt = performance.now();
      s.calls.set(call.id, abort);
      return { session: sid, answer: answerOnSession(s, call, abort) };
    },
    plainCall(method, headers, parsedBody, vid, signal) {
      if (!fast) return undefined;
      const call = plainToolCall(method, headers, parsedBody);
      if (call === undefined) return undefined;
      follow();
      return factory.answerPlain(call, vid, signal);
    },
    async handle(request, parsedBody, vid) {
      follow();
      if (request.method === "POST" && !(await isLegacyRequest(request, parsedBody)))
        return modern.fetch(request, { parsedBody });
      const sid = request.headers.get("mcp-session-id");
      if (sid !== null) {
        const session = sessions.get(sid);
        if (!session)
          return rpcError(
            404,
            -32001,
            "Session not found: it ended or the server restarted; initialize again",
          );
        sessions.delete(sid);
        sessions.set(sid, session);
        cancelCalls(session, parsedBody);
        return onSession(session, request, parsedBody);
      }
      if (request.method === "POST" && isInitializeRequest(parsedBody))
        return openSession(request, parsedBody, vid);
      return rpcError(
        400,
        -32000,
        "Bad Request: send initialize first (2025 era) and then its Mcp-Session-Id, or a 2026-07-28 request with its _meta envelope",
      );
    },
    async close() {
      unsubscribe?.();
      unsubscribe = undefined;
      stopSweeping();
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map((s) => s.transport.close()));
      await modern.close();
    },
  };
}
