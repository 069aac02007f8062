/**
 * The fast path: a GET of one value by its key, what clients send most, answered on node:http
 * directly, beside fastify's router, hook runner and reply pipeline (whose cost bench/RESULTS.md
 * measures). PUT goes through fastify: a paired A/B did not show the fast path paying for it there
 * (a write's cost is the store's, not the framework's).
 *
 * It takes only the plain shape of a GET: a key of unreserved URL characters (nothing to
 * percent-decode), no query, no condition header; and only while the server is not closing and the
 * token, if one is set, holds. Anything else goes to fastify untouched. What it answers (status,
 * headers, body, the log line) is what fastify's route answers to the same request: the route's own
 * helpers and server/answer.ts build it, and test/server/fast-path.test.ts sends every case both
 * ways and compares.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Tree } from "../tree/types.js";
import { answerHeaders, requestLine } from "./answer.js";
import { logFailure, mapError } from "./errors.js";
import { nodeEtag } from "./http-headers.js";
import { keyFromUrl } from "./key-path.js";
import { notFound, TREE_PREFIX } from "./routes/tree.js";
import { nodeBody } from "./wire.js";

export interface FastPathDeps {
  tree: Tree;
  logger: Logger;
  /** Whether an Authorization header holds the server's token; undefined when none is needed. */
  authorized: ((header: string | undefined) => boolean) | undefined;
  /** The id fastify would give the request (one counter for both paths). */
  requestId(req: IncomingMessage): string;
  closing(): boolean;
}

/** Answers the request and says true, or says false having touched nothing: fastify's turn. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

// Nothing to decode, nothing the router treats specially: unreserved characters, sub-delims and '/'.
const PLAIN_KEY_URL = /^\/v1\/tree\/[A-Za-z0-9._~!$&'()*+,=:@/-]+$/;
// Keys are at most 4 KiB: a longer URL is refused, and fastify says how.
const MAX_URL = TREE_PREFIX.length + 1 + 4096;
const JSON_UTF8 = "application/json; charset=utf-8";

/** One request being answered. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  id: string;
  start: number;
}

export function createFastPath(d: FastPathDeps): FastPath {
  /**
   * Writes the answer with the headers fastify's route and hooks give it (server/answer.ts, which
   * fastify's hooks use too), and the request's log line. It never runs while closing.
   */
  function send(x: Exchange, status: number, body: string, extra?: { etag: string }) {
    x.res.writeHead(status, {
      "content-type": JSON_UTF8,
      "content-length": Buffer.byteLength(body),
      ...answerHeaders(d.tree, x.id, false),
      ...extra,
    });
    x.res.end(body);
    const line = requestLine(x.req.method, x.req.url ?? "", status, performance.now() - x.start);
    d.logger.info({ reqId: x.id, ...line }, "request");
  }

  /** Answers an error as fastify's error handler does (server/app.ts: answerError). */
  function fail(x: Exchange, err: unknown) {
    const mapped = mapError(err);
    logFailure(d.logger.child({ reqId: x.id }), err, mapped);
    send(x, mapped.status, JSON.stringify(mapped.body));
  }

  async function get(x: Exchange, key: string) {
    try {
      const node = await d.tree.get(key);
      if (!node) throw notFound(key);
      send(x, 200, nodeBody(node), { etag: nodeEtag(node) });
    } catch (err) {
      fail(x, err);
    }
  }

  return function fastPath(req, res) {
    const url = req.url ?? "";
    if (url.length > MAX_URL || url.endsWith("/") || !PLAIN_KEY_URL.test(url)) return false;
    const h = req.headers;
    if (d.closing() || (d.authorized && !d.authorized(h.authorization))) return false;
    if (req.method === "GET") {
      if (h["if-none-match"] !== undefined) return false;
      void get({ req, res, id: d.requestId(req), start: performance.now() }, keyFromUrl(url, TREE_PREFIX));
      return true;
    }
    return false;
  };
}
