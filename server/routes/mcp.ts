/**
 * `/mcp`: the MCP endpoint (Streamable HTTP, both protocol eras; mcp/http.ts). It is an ordinary
 * route, so the app's hooks — the token, and the request checks every route gets — run before
 * it; the request is handed to the SDK as a web Request (fastify parsed the JSON body already)
 * and its Response streamed back through the reply, so headers and the request's log line are
 * the app's as for every route.
 */
import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { Logger } from "pino";
import { z } from "zod";
import { createMcpHttp } from "../../mcp/http.js";
import { createLiveTree } from "../../mcp/live.js";
import { createMcpFactory } from "../../mcp/server.js";
import { listenShared } from "../../mcp/share.js";
import { runtimeSource } from "../../mcp/source.js";
import { RUN_ID } from "../../tools/run-id.js";
import type { Runtime } from "../../tools/runtime.js";
import type { ToolSearcher } from "../../tools/search/searcher.js";
import type { Tree } from "../../tree/types.js";
import { ServerError } from "../errors.js";

export interface McpRoutesOptions {
  tree: Tree;
  runtime: Runtime;
  logger: Logger;
  /** A 2025-era session idle this long (ms) is closed (mcp/http.ts; default 30 minutes, 0: never). */
  sessionIdleMs?: number;
  /** Serve `byteseek mcp` relays on a socket (mcp/share.ts): set when this process holds a store folder. */
  share?: McpShareOptions;
  /** The catalogue's search, for byteseek_find (without it, byteseek_find matches words). */
  search?: ToolSearcher;
  /** Plain `tools/call`s answered beside the SDK (mcp/fast-call.ts); false: by the SDK (default true). */
  fast?: boolean;
}

export interface McpShareOptions {
  /** The socket (tree/held-socket.ts `sharePath`). */
  path: string;
  /** The root the file tools touch: a relay started for another is refused. */
  workspace: string;
  /** Whether a relay's token is the server's (the app's check); absent: the server asks for none. */
  credential?: (token: string | undefined) => boolean;
}

const McpQuery = z.object({
  vid: z
    .string()
    .regex(RUN_ID, "a vid is letters, digits and _.:@- (at most 128)")
    .optional()
    .describe("the run the calls belong to (default mcp-<client name>)"),
});

/** Hop-by-hop and body framing headers: the SDK gets the parsed body, not the bytes. */
const SKIPPED = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"]);

/** Whether `origin` is `http(s)://<the Host the request named>`. */
function sameSite(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const o = new URL(origin);
    return (o.protocol === "http:" || o.protocol === "https:") && o.host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** Aborted when the connection closes before the answer was written (the client went away). */
function closed(res: ServerResponse): AbortController {
  const ac = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) ac.abort();
  });
  return ac;
}

function toWebRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || SKIPPED.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return new Request(`http://${req.host}${req.url}`, { method: req.method, headers });
}

export const mcpRoutes: FastifyPluginAsyncZod<McpRoutesOptions> = async function mcpRoutes(
  app,
  { tree, runtime, logger: parent, sessionIdleMs, share, search, fast = true },
) {
  const logger = parent.child({ part: "mcp" });
  const live = createLiveTree(tree, logger);
  const factory = createMcpFactory({
    source: runtimeSource(tree, runtime, search),
    logger,
    live,
    workspace: runtime.workspace,
  });
  const mcp = createMcpHttp({
    factory,
    live,
    logger,
    fast,
    ...(sessionIdleMs === undefined ? {} : { sessionIdleMs }),
  });
  // The socket carries the HTTP API too (for `kvspace` on the folder): this server's own handler.
  const shared = share
    ? await listenShared({
        ...share,
        factory,
        live,
        logger,
        plainCalls: fast,
        holder: "serve",
        http: (socket) => {
          app.server.emit("connection", socket);
        },
      })
    : undefined;
  app.addHook("preClose", async function closeMcp() {
    await shared?.close();
    await mcp.close();
    live.close();
  });

  // MCP's Streamable HTTP requires the endpoint to refuse other sites' pages (DNS rebinding): an
  // Origin, when sent, must be this server's own. (A request-level guard for every route may
  // refuse first; this keeps /mcp safe on its own.)
  app.addHook("onRequest", function sameOrigin(req, _reply, done) {
    const origin = req.headers.origin;
    if (origin !== undefined && !sameSite(origin, req.headers.host))
      return done(
        new ServerError(
          "HTTP_FORBIDDEN_ORIGIN",
          `requests from ${origin.slice(0, 100)} may not reach /mcp: MCP clients send no Origin, and pages of other sites are refused`,
        ),
      );
    done();
  });

  // Streamable HTTP is GET, POST and DELETE: any other method is told which (before its body is read).
  app.route({
    method: ["PUT", "PATCH"],
    url: "/mcp",
    schema: { hide: true },
    onRequest(_req, reply, done) {
      reply.header("allow", "GET, POST, DELETE");
      done(
        new ServerError(
          "HTTP_METHOD_NOT_ALLOWED",
          "/mcp answers GET, POST and DELETE (MCP's Streamable HTTP): send JSON-RPC messages with POST",
        ),
      );
    },
    handler: async () => undefined,
  });

  app.route({
    method: ["GET", "POST", "DELETE"],
    url: "/mcp",
    schema: {
      summary:
        "MCP (Streamable HTTP, 2025 sessions and the stateless 2026-07-28 revision): byteseek's tools, prompts and tree",
      querystring: McpQuery,
    },
    async handler(req, reply) {
      // The quick answers are sent as bytes, as the SDK's are: a string would gain "; charset=utf-8".
      const abort = closed(reply.raw);
      const plain = mcp.plainCall(req.method, req.headers, req.body, req.query.vid, abort.signal);
      if (plain !== undefined)
        return reply
          .code(200)
          .header("content-type", "application/json")
          .send(Buffer.from(await plain));
      const onSession = mcp.sessionCall(req.method, req.headers, req.body, abort);
      if (onSession !== undefined)
        return reply
          .code(200)
          .header("content-type", "application/json")
          .header("mcp-session-id", onSession.session)
          .send(Buffer.from(await onSession.answer));
      const res = await mcp.handle(toWebRequest(req), req.body, req.query.vid);
      reply.code(res.status);
      res.headers.forEach((value, name) => {
        if (name !== "content-length") reply.header(name, value);
      });
      if (res.body === null) return reply.send();
      if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        // fastify sets a stream's headers without writing them, so they would leave with its first
        // event: a 2025-era GET stream may wait minutes for one, and a client (or a proxy) waiting
        // for the headers times out. They are written as the stream is piped to the socket.
        // (and, as the other event streams say, a proxy must not buffer it: server/sse.ts)
        reply.header("x-accel-buffering", "no");
        reply.raw.once("pipe", () => reply.raw.flushHeaders());
        return reply.send(Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>));
      }
      return reply.send(Buffer.from(await res.arrayBuffer()));
    },
  });
};
