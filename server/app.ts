/**
 * The HTTP app: `buildApp(deps)` answers a fastify instance with every route registered, ready to
 * `inject` or `listen`. It owns no resources: the tree (and the runtime) are the caller's to close.
 */
import { type IncomingMessage, STATUS_CODES } from "node:http";
import fastifySwagger from "@fastify/swagger";
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from "fastify";
import { validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { Logger } from "pino";
import type { Agent } from "../agent/loop.js";
import type { ModelChoices } from "../agent/model-choices.js";
import type { LiveRuntime } from "../agent/replay/replay.js";
import { createApprovals } from "../tools/gate/approvals.js";
import type { McpClient } from "../tools/mcp/client.js";
import { createRecentCalls, type RecentCalls } from "../tools/records/recent-calls.js";
import type { Runtime } from "../tools/runtime.js";
import type { ToolSearcher } from "../tools/search/searcher.js";
import { exactJson } from "../tree/exact.js";
import { fastLanesByDefault } from "../tree/fast-lanes.js";
import type { Tree } from "../tree/types.js";
import { answerHeaders, requestLine } from "./answer.js";
import { createAuthCheck, createCredentialCheck } from "./auth.js";
import { createClosingServer } from "./connections.js";
import { logFailure, mapClientError, mapError, ServerError } from "./errors.js";
import { parseJsonBody } from "./exact-json.js";
import { createFastPath, type FastPath } from "./fast-path.js";
import { createFrontDoor } from "./front-door.js";
import { revisionHeaders } from "./http-headers.js";
import { openApiOptions } from "./openapi.js";
import { createRequestGuard } from "./request-guard.js";
import { agentRoutes } from "./routes/agent.js";
import { approvalRoutes } from "./routes/approvals.js";
import { docsRoutes } from "./routes/docs.js";
import { grepRoutes } from "./routes/grep.js";
import { healthRoutes } from "./routes/health.js";
import { infoRoutes } from "./routes/info.js";
import { type McpShareOptions, mcpRoutes } from "./routes/mcp.js";
import { mcpServerRoutes } from "./routes/mcp-servers.js";
import { moveRoutes } from "./routes/move.js";
import { overviewRoutes, type StoreInfo } from "./routes/overview.js";
import { promptRoutes } from "./routes/prompt.js";
import { runDetailRoutes } from "./routes/run-detail.js";
import { runDiffRoutes } from "./routes/run-diff.js";
import { toolsRoutes } from "./routes/tools.js";
import { transferRoutes } from "./routes/transfer.js";
import { treeRoutes } from "./routes/tree.js";
import { txnRoutes } from "./routes/txn.js";
import { watchRoutes } from "./routes/watch.js";
import { type WebRoutesOptions, webRoutes } from "./web.js";

declare module "fastify" {
  interface FastifyInstance {
    /** Every route registered, method by method (HEAD twins included). */
    routeTable: ReadonlyArray<{ method: string; url: string }>;
  }
}

export interface AppDeps {
  tree: Tree;
  logger: Logger;
  /**
   * When set, every route but /healthz and the page's shell and assets needs the token, as
   * `Authorization: Bearer <token>` or the page's cookie (server/auth.ts). Unset: no credential is
   * asked (`byteseek serve --no-auth`, or a test about something else).
   */
  token?: string;
  /** Largest request body, bytes (default 8 MiB). */
  bodyLimit?: number;
  /** The tool runtime, for `GET /v1/tools`, `POST /v1/tools/:name/call` and `GET /v1/prompt`. */
  runtime?: Runtime;
  /** The catalogue's search for `GET /v1/tools?search=` (default: one over the runtime's catalogue, made on first use). */
  search?: ToolSearcher;
  /** The agent, for `POST /v1/agent/turn`. */
  agent?: Agent;
  /** Runs tools again in a replay with `liveTools` (`POST /v1/agent/runs/<vid>/replay`). */
  replayLive?: LiveRuntime;
  /** The MCP client, for `GET /v1/mcp` and `POST /v1/mcp/sync` (the upstream servers' registry). */
  mcp?: McpClient;
  /** The browser UI (server/web.ts) at `/`; `false` leaves it out. */
  web?: WebRoutesOptions | false;
  /** Interval between SSE progress events, ms (default 15 s). */
  watchProgressMs?: number;
  /**
   * The HTTP fast lane (tree/fast-lanes.ts): plain GET and PUT of a value answered beside fastify
   * (server/fast-path.ts); false: fastify's routes answer them (the reference lane). Default:
   * BYTESEEK_FAST (on).
   */
  fastPath?: boolean;
  /**
   * The MCP fast lane: plain `tools/call`s answered beside the SDK (mcp/fast-call.ts); false: the
   * SDK's transports and instances answer them. Default: BYTESEEK_FAST (on).
   */
  fastMcp?: boolean;
  /** Host names the Host header may carry besides loopback ones; honoured only with a token. */
  allowedHosts?: readonly string[];
  /**
   * Time to receive a whole request (headers and body), ms (default 60 s): a body that never
   * finishes is cut with 408 and its socket closed. 0 turns the bound off.
   */
  bodyTimeoutMs?: number;
  /** Concurrent watches (SSE) at most (default 1,000); beyond, 503 with Retry-After. */
  maxWatches?: number;
  /** An MCP 2025-era session idle this long (ms) is closed (default 30 minutes; 0: never). */
  mcpSessionIdleMs?: number;
  /** Serve `byteseek mcp` relays on this socket (mcp/share.ts): set when this process holds a store folder. */
  mcpShare?: McpShareOptions;
  /** The models a turn may name, for `GET /v1/info` (the page's model picker): `Byteseek.models`. */
  models?: () => Promise<ModelChoices>;
  /** The store the server runs on, for `GET /v1/overview` (its size and durability). */
  store?: StoreInfo;
}

/** The app `buildApp` answers. */
export type App = Awaited<ReturnType<typeof buildApp>>;

export const DEFAULT_BODY_LIMIT = 8 * 1024 * 1024;
export const DEFAULT_BODY_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_WATCHES = 1000;

/** Routes whose JSON bodies carry tree values, read with integers beyond 2^53 exact (server/wire.ts). */
const VALUE_ROUTES: ReadonlySet<string> = new Set(["/v1/tree/*", "/v1/tree", "/v1/txn"]);

/** What a write route accepts (import: NDJSON), said in every 415. */
const ACCEPTED_TYPES = "send the body as application/json (POST /v1/import: application/x-ndjson)";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** What a server without a token records as the credential of every request. */
const NO_CREDENTIAL = { kind: "none" } as const;

/** Builds the app; `await app.ready()` (or listen) before use. */
export async function buildApp(deps: AppDeps) {
  const {
    tree,
    logger,
    token,
    bodyLimit = DEFAULT_BODY_LIMIT,
    watchProgressMs = 15_000,
    bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS,
    maxWatches = DEFAULT_MAX_WATCHES,
  } = deps;
  let counter = 0;
  const requestId = (req: IncomingMessage): string => {
    const given = req.headers["x-request-id"];
    return typeof given === "string" && REQUEST_ID.test(given) ? given : `r${(++counter).toString(36)}`;
  };
  let fastPath: FastPath | undefined;
  const door = createFrontDoor({
    tree,
    logger,
    requestId,
    bodyTimeoutMs,
    guard: createRequestGuard({
      token: Boolean(token),
      ...(deps.allowedHosts ? { allowedHosts: deps.allowedHosts } : {}),
    }),
  });
  const app = Fastify({
    loggerInstance: logger,
    // Our own onResponse hook writes the one line per request.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "reqId" }),
    bodyLimit,
    routerOptions: { maxParamLength: 8192 },
    return503OnClosing: false,
    genReqId(req) {
      return door.fastifyId(requestId(req), req);
    },
    // The server fastify would make, with the fast path in front of it.
    serverFactory(handler, options) {
      // fastify's options once it has filled in its defaults (what it would set on its own server).
      const o = options as {
        keepAliveTimeout?: number;
        requestTimeout?: number;
        connectionTimeout?: number;
        maxRequestsPerSocket?: number;
      };
      const server = createClosingServer((req, res) => {
        // Other sites first, before either path: nothing runs for them (server/front-door.ts).
        if (door.admit(req, res) && !fastPath?.(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = o.keepAliveTimeout ?? 72_000;
      server.requestTimeout = o.requestTimeout ?? 0;
      server.setTimeout(o.connectionTimeout ?? 0);
      if ((o.maxRequestsPerSocket ?? 0) > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket!;
      return server;
    },
    // A URL the router cannot decode: answered before any hook runs, so stamp the headers here.
    frameworkErrors(err, req, reply) {
      const mapped = mapError(err);
      (reply as unknown as FastifyReply)
        .code(mapped.status)
        .headers(answerHeaders(tree, req.id, false))
        .send(mapped.body);
    },
    // A request the HTTP parser refused never reaches the router: answer it in the error shape too.
    clientErrorHandler(err, socket) {
      if ((err as { code?: string }).code === "ECONNRESET" || socket.destroyed) return;
      const mapped = mapClientError(err);
      if (socket.writable) {
        const body = JSON.stringify(mapped.body);
        socket.write(
          `HTTP/1.1 ${mapped.status} ${STATUS_CODES[mapped.status] ?? ""}\r\n` +
            "content-type: application/json; charset=utf-8\r\n" +
            `content-length: ${Buffer.byteLength(body)}\r\n` +
            Object.entries(revisionHeaders(tree))
              .map(([name, value]) => `${name}: ${value}\r\n`)
              .join("") +
            `connection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    },
  }).withTypeProvider<ZodTypeProvider>();

  // Every route as registered (the guard's test probes each one, so a new route cannot miss it).
  const routeTable: Array<{ method: string; url: string }> = [];
  app.decorate("routeTable", routeTable);
  app.addHook("onRoute", function recordRoute(r) {
    for (const method of Array.isArray(r.method) ? r.method : [r.method])
      routeTable.push({ method, url: r.url });
  });

  app.setValidatorCompiler(validatorCompiler);
  // Handlers answer the JSON form already (values converted by wire.ts): stringify is all that is left.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  // JSON bodies: fastify's own parser for the common case, an exact one when a number may not fit
  // a double, and a depth limit (server/exact-json.ts).
  const { onProtoPoisoning = "error", onConstructorPoisoning = "error" } = app.initialConfig;
  const defaultJson = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  function plainJson(text: string): unknown {
    let parsed: { err: Error | null; body: unknown } = { err: null, body: undefined };
    // The default parser answers synchronously and never looks at the request.
    defaultJson(undefined as unknown as FastifyRequest, text, (err, body) => {
      parsed = { err, body };
    });
    if (parsed.err) throw parsed.err;
    return parsed.body;
  }
  function parseJson(text: string): unknown {
    return text === "" ? plainJson(text) : parseJsonBody(text, plainJson);
  }
  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser(
    "application/json",
    { parseAs: "string" },
    function exactJsonBody(req, text, done) {
      try {
        const body = parseJson(text as string);
        // Only the routes that store values take a bigint (an exact int64); any other route gets
        // plain JSON, an integer a double cannot hold refused with 400 (a tool's arguments, say).
        done(null, VALUE_ROUTES.has(req.routeOptions.url ?? "") ? body : exactJson(body, "body"));
      } catch (err) {
        done(err as Error, undefined);
      }
    },
  );

  let closing = false;
  const watches = new Set<AbortController>();
  const credentials = token ? createCredentialCheck(token) : undefined;
  const checkAuth = credentials ? createAuthCheck(credentials) : undefined;
  const fast = deps.fastPath ?? fastLanesByDefault();
  if (fast) {
    fastPath = createFastPath({
      tree,
      logger,
      authorized: credentials ? (headers) => credentials.of(headers) !== undefined : undefined,
      requestId,
      closing: () => closing,
      parseJson,
      bodyLimit,
    });
  }

  // The per-request hooks take callbacks rather than being async: no promise per hook per request.
  app.addHook("onRequest", function gate(req: FastifyRequest, _reply, done) {
    if (closing)
      return done(new ServerError("HTTP_SHUTTING_DOWN", "the server is shutting down; retry shortly"));
    try {
      if (checkAuth) checkAuth(req);
      else req.credential = NO_CREDENTIAL;
    } catch (err) {
      return done(err as Error);
    }
    done();
  });
  // The fast path does these hooks' work itself (server/answer.ts lists them).
  app.addHook("onSend", function stamp(req, reply, payload, done) {
    reply.headers(answerHeaders(tree, req.id, closing));
    done(null, payload);
  });
  app.addHook("onResponse", function logRequest(req, reply, done) {
    req.log.info(requestLine(req.method, req.url, reply.statusCode, reply.elapsedTime), "request");
    done();
  });
  app.addHook("preClose", async function stopWatches() {
    closing = true;
    for (const ac of watches) ac.abort();
  });

  app.setErrorHandler(function answerError(err, req, reply) {
    const mapped = mapError(err);
    if (
      mapped.body.error.code === "HTTP_UNSUPPORTED_MEDIA_TYPE" &&
      !/^send /.test(mapped.body.error.message)
    ) {
      const type = req.headers["content-type"];
      mapped.body.error.message = `${type === undefined ? "a body without a Content-Type" : `Content-Type ${type.slice(0, 100)}`} is not accepted: ${ACCEPTED_TYPES}`;
    }
    logFailure(req.log, err, mapped);
    reply.code(mapped.status).send(mapped.body);
  });
  app.setNotFoundHandler(function noRoute(req, reply) {
    const q = req.url.indexOf("?");
    const path = q < 0 ? req.url : req.url.slice(0, q);
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    reply.code(404).send({ error: { code: "HTTP_NOT_FOUND", message: `no route ${req.method} ${shown}` } });
  });

  await app.register(fastifySwagger, openApiOptions({ token: Boolean(token) }));

  await app.register(healthRoutes, { tree });
  await app.register(treeRoutes, { tree });
  await app.register(txnRoutes, { tree });
  await app.register(moveRoutes, { tree });
  await app.register(grepRoutes, { tree });
  await app.register(watchRoutes, { tree, watches, progressMs: watchProgressMs, maxWatches });
  await app.register(transferRoutes, { tree, bodyLimit });
  await app.register(docsRoutes);
  // the index of the call records (a tool's recent calls, the tools failing lately): one for both
  // routes, made at first use, then following the tree's watch
  let recentCalls: RecentCalls | undefined;
  const records = (): RecentCalls =>
    (recentCalls ??= createRecentCalls({
      tree,
      onError: (err) => logger.warn({ err }, "recent calls: watch restarted"),
    }));
  app.addHook("onClose", async function closeRecords() {
    recentCalls?.close();
  });
  if (deps.runtime)
    await app.register(toolsRoutes, {
      tree,
      records,
      runtime: deps.runtime,
      ...(deps.search ? { search: deps.search } : {}),
    });
  // Approvals need only the tree: a server without a runtime (or beside another process's, on etcd)
  // still lists and decides them, and the page's panel never meets a 404.
  await app.register(approvalRoutes, { approvals: deps.runtime?.approvals ?? createApprovals(tree) });
  if (deps.runtime) await app.register(promptRoutes, { tree, runtime: deps.runtime });
  // always there: the page asks it at load, and a 404 would be an error in its console
  await app.register(infoRoutes, {
    ...(deps.runtime ? { runtime: deps.runtime } : {}),
    ...(deps.models ? { models: deps.models } : {}),
  });
  if (deps.runtime)
    await app.register(mcpRoutes, {
      tree,
      ...(deps.search ? { search: deps.search } : {}),
      runtime: deps.runtime,
      logger,
      fast: deps.fastMcp ?? fastLanesByDefault(),
      ...(deps.mcpSessionIdleMs === undefined ? {} : { sessionIdleMs: deps.mcpSessionIdleMs }),
      // the socket's relays need the same credential as its HTTP requests
      ...(deps.mcpShare === undefined
        ? {}
        : { share: { ...deps.mcpShare, ...(credentials ? { credential: credentials.holds } : {}) } }),
    });
  if (deps.mcp) await app.register(mcpServerRoutes, { mcp: deps.mcp });
  if (deps.agent) await app.register(agentRoutes, { tree, agent: deps.agent, turns: watches });
  // comparing runs reads only the tree
  await app.register(runDiffRoutes, { tree });
  await app.register(runDetailRoutes, {
    tree,
    logger,
    ...(deps.runtime ? { runtime: deps.runtime } : {}),
    ...(deps.replayLive ? { live: deps.replayLive } : {}),
  });
  // the page's landing view: runs, failing tools and the store, read from the tree
  await app.register(overviewRoutes, { tree, records, ...(deps.store ? { store: deps.store } : {}) });
  if (deps.web !== false)
    await app.register(webRoutes, {
      ...(deps.web ?? {}),
      ...(credentials ? { exchange: (t: string) => credentials.exchange(t)?.setCookie } : {}),
    });

  return app;
}
