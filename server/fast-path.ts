/**
 * The fast path: a GET or a PUT of one value by its key, what clients send most, answered on
 * node:http directly, beside fastify's router, hook runner, body parsing and reply pipeline (whose
 * cost bench/RESULTS.md measures). On LevelDB a write's cost is the store's; on etcd the server
 * shares the machine's cores with etcd, and what fastify spends per PUT is throughput lost.
 *
 * It takes only the plain shape of each: a key of unreserved URL characters (nothing to
 * percent-decode), no query, no condition header; for a PUT, a JSON body of a stated length within
 * the body limit. And only while the server is not closing and the token, if one is set, holds.
 * Anything else goes to fastify untouched. What it answers (status, headers, body, the log line)
 * is what fastify's route answers to the same request: the route's own helpers, the app's JSON
 * parser and server/answer.ts build it, and test/server/fast-path.test.ts sends every case both
 * ways and compares.
 *
 * A PUT's body is read here, as fastify's parser reads it (raw bytes, decoded once as UTF-8). A
 * body that stops arriving is the front door's to cut (server/front-door.ts: 408, socket closed,
 * its log line); the write is then never made.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { writeToJson } from "../tree/http/index.js";
import type { Tree } from "../tree/types.js";
import { answerHeaders, requestLine } from "./answer.js";
import { logFailure, mapError } from "./errors.js";
import { etagOf, nodeEtag } from "./http-headers.js";
import { keyFromUrl } from "./key-path.js";
import { notFound, TREE_PREFIX } from "./routes/tree.js";
import { nodeBody, setFromBody } from "./wire.js";

export interface FastPathDeps {
  tree: Tree;
  logger: Logger;
  /** Whether a request's headers carry the server's credential (server/auth.ts); undefined when none is needed. */
  authorized: ((headers: IncomingHttpHeaders) => boolean) | undefined;
  /** The id fastify would give the request (one counter for both paths). */
  requestId(req: IncomingMessage): string;
  closing(): boolean;
  /** The app's JSON body parser (exact integers, depth limit, poisoning refused): throws what fastify's would. */
  parseJson(text: string): unknown;
  /** Largest body, bytes: a longer one is fastify's to refuse. */
  bodyLimit: number;
}

/** Answers the request and says true, or says false having touched nothing: fastify's turn. */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

// Nothing to decode, nothing the router treats specially: unreserved characters, sub-delims and '/'.
const PLAIN_KEY_URL = /^\/v1\/tree\/[A-Za-z0-9._~!$&'()*+,=:@/-]+$/;
// Keys are at most 4 KiB: a longer URL is refused, and fastify says how.
const MAX_URL = TREE_PREFIX.length + 1 + 4096;
const JSON_UTF8 = "application/json; charset=utf-8";
/** The Content-Types of a PUT the fast path reads (fastify's JSON parser takes these, and others). */
const JSON_BODY: ReadonlySet<string | undefined> = new Set(["application/json", JSON_UTF8]);
const LENGTH = /^[1-9][0-9]{0,9}$/;

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
   * fastify's hooks use too), and the request's log line. A PUT taken before the server began
   * closing may be answered after: it then says the connection closes, as fastify's hook does.
   */
  function send(
    x: Exchange,
    status: number,
    body: string,
    extra?: { etag: string } | { connection: "close" },
  ) {
    x.res.writeHead(status, {
      "content-type": JSON_UTF8,
      "content-length": Buffer.byteLength(body),
      ...answerHeaders(d.tree, x.id, d.closing()),
      ...extra,
    });
    x.res.end(body);
    const line = requestLine(x.req.method, x.req.url ?? "", status, performance.now() - x.start);
    d.logger.info({ reqId: x.id, ...line }, "request");
  }

  /**
   * Answers an error as fastify's error handler does (server/app.ts: answerError); a body that
   * did not parse also closes the connection, as fastify's parser does (the client may send more).
   */
  function fail(x: Exchange, err: unknown, unparsed = false) {
    const mapped = mapError(err);
    logFailure(d.logger.child({ reqId: x.id }), err, mapped);
    send(x, mapped.status, JSON.stringify(mapped.body), unparsed ? { connection: "close" } : undefined);
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

  /**
   * Reads the body of `x.req` (node's parser delivers exactly Content-Length bytes before "end");
   * undefined if the request is cut first.
   */
  function readBody(x: Exchange): Promise<Buffer | undefined> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      x.req.on("data", (chunk: Buffer) => chunks.push(chunk));
      x.req.on("end", () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
      // Cut by the front door's body bound, or by the client: nobody is left to answer. (After
      // "end", "close" changes nothing: the promise is settled.)
      x.req.on("error", () => resolve(undefined));
      x.req.on("close", () => resolve(undefined));
    });
  }

  async function put(x: Exchange, key: string) {
    const raw = await readBody(x);
    if (!raw || x.res.destroyed) return;
    let body: unknown;
    try {
      body = d.parseJson(raw.toString("utf8"));
    } catch (err) {
      fail(x, err, true);
      return;
    }
    try {
      // The route's own steps (server/routes/tree.ts: putKey), in its order.
      const { value, options } = setFromBody(body);
      const res = await d.tree.set(key, value, options);
      send(x, 200, JSON.stringify(writeToJson(res)), { etag: etagOf(res.version) });
    } catch (err) {
      fail(x, err);
    }
  }

  return function fastPath(req, res) {
    const url = req.url ?? "";
    if (url.length > MAX_URL || url.endsWith("/") || !PLAIN_KEY_URL.test(url)) return false;
    const h = req.headers;
    if (d.closing() || (d.authorized && !d.authorized(h))) return false;
    if (req.method === "GET") {
      if (h["if-none-match"] !== undefined) return false;
      void get({ req, res, id: d.requestId(req), start: performance.now() }, keyFromUrl(url, TREE_PREFIX));
      return true;
    }
    if (req.method === "PUT") {
      const length = h["content-length"];
      if (
        h["if-match"] !== undefined ||
        h["if-none-match"] !== undefined ||
        h["transfer-encoding"] !== undefined ||
        !JSON_BODY.has(h["content-type"]) ||
        length === undefined ||
        !LENGTH.test(length) ||
        Number(length) > d.bodyLimit
      )
        return false;
      const x = { req, res, id: d.requestId(req), start: performance.now() };
      void put(x, keyFromUrl(url, TREE_PREFIX));
      return true;
    }
    return false;
  };
}
