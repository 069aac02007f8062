/**
 * Streamable HTTP for both protocol eras, as web-standard Request → Response (the fastify route in
 * server/routes/mcp.ts adapts it, after the app's hooks — token, Host/Origin — ran):
 * - 2026-07-28 requests (a per-request `_meta` envelope) go to the SDK's stateless handler, one
 *   instance per request; list changes reach clients on their `subscriptions/listen` streams.
 * - 2025-era traffic (initialize, then `Mcp-Session-Id`) gets a session: one instance and one
 *   transport each, so `notifications/*_changed` reach the client on its GET stream and
 *   elicitation (`elicitation/create`) can ask mid-call. Sessions end on DELETE, or the least
 *   recently used one is closed when `maxSessions` are open.
 */
import { randomUUID } from "node:crypto";
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { Logger } from "pino";
import type { LiveTree } from "./live.js";
import { notifyInstances } from "./notify.js";
import { keyToUri } from "./resources.js";
import type { McpFactory, McpInstance } from "./server.js";

export interface McpHttpOptions {
  factory: McpFactory;
  live: LiveTree;
  logger: Logger;
  /** 2025-era sessions kept open at once (default 256). */
  maxSessions?: number;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  instance: McpInstance;
}

export interface McpHttp {
  /** Answers one request to the MCP endpoint; `vid` is the run its calls belong to (from `?vid=`). */
  handle(request: Request, parsedBody: unknown, vid?: string): Promise<Response>;
  /** Ends every session and stream. */
  close(): Promise<void>;
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
      sessions.delete(oldest);
      logger.info({ session: oldest }, "closing the least recently used MCP session");
      void s.transport.close();
    }
    const instance = factory.create({ era: "legacy", ...(vid ? { vid } : {}) });
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized(id) {
        sessions.set(id, { transport, instance });
      },
      onsessionclosed(id) {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await instance.server.connect(transport);
    return transport.handleRequest(request, { parsedBody });
  }

  return {
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
        return session.transport.handleRequest(request, { parsedBody });
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
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map((s) => s.transport.close()));
      await modern.close();
    },
  };
}
