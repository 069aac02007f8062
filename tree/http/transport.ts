/**
 * How the HTTP tree sends its requests. Two implementations of one small interface:
 * - `undici` — an undici `Pool` (the reference lane, `BYTESEEK_FAST=0`);
 * - `node` — `node:http`/`node:https` with a keep-alive agent (the fast lane). It answers the same,
 *   and costs a fraction of undici's load time, which is most of what a one-shot `kvspace get`
 *   over HTTP would otherwise spend (bench/cli.ts measures it).
 * undici is imported only when its lane is chosen. Neither bounds how long a server may stay
 * silent: the HTTP tree does, for both alike, through each request's signal (silence.ts).
 */
import type { Readable } from "node:stream";

export type TransportKind = "node" | "undici";

export interface TransportRequest {
  method: "GET" | "PUT" | "POST" | "DELETE";
  /** The path and query, e.g. `/v1/tree/a?force=1`. */
  path: string;
  headers: Record<string, string>;
  body?: string | Readable | null;
  signal?: AbortSignal;
}

export interface TransportAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it arrives (Buffers, or strings after `setEncoding`). */
  body: Readable;
}

export interface HttpTransport {
  request(req: TransportRequest): Promise<TransportAnswer>;
  close(): Promise<void>;
}

export interface TransportOptions {
  connections: number;
  socketPath?: string;
}

/** The transport of `kind` to `origin` (e.g. `http://127.0.0.1:7411`). */
export function createTransport(
  kind: TransportKind,
  origin: string,
  options: TransportOptions,
): HttpTransport {
  return kind === "undici" ? undiciTransport(origin, options) : nodeTransport(origin, options);
}

/** The whole body as text; `onChunk` is told of each piece as it arrives (a sign the server is alive). */
export async function bodyText(body: Readable, onChunk?: () => void): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of body) {
    onChunk?.();
    parts.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  }
  return Buffer.concat(parts).toString("utf8");
}

function undiciTransport(origin: string, options: TransportOptions): HttpTransport {
  type Pool = import("undici").Pool;
  let pool: Promise<Pool> | undefined;
  const open = () =>
    (pool ??= import("undici").then(
      ({ Pool }) =>
        new Pool(origin, {
          connections: options.connections,
          keepAliveTimeout: 30_000,
          pipelining: 1,
          ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath }),
        }),
    ));
  return {
    async request(req) {
      const res = await (await open()).request({
        method: req.method,
        path: req.path,
        headers: req.headers,
        body: req.body ?? null,
        ...(req.signal ? { signal: req.signal } : {}),
      });
      return { statusCode: res.statusCode, headers: res.headers, body: res.body };
    },
    async close() {
      if (pool) await (await pool).close();
    },
  };
}

function nodeTransport(origin: string, options: TransportOptions): HttpTransport {
  type Http = typeof import("node:http");
  const url = new URL(origin);
  const secure = url.protocol === "https:";
  let lib: Promise<{ http: Http; agent: import("node:http").Agent }> | undefined;
  const open = () =>
    (lib ??= (secure ? import("node:https") : import("node:http")).then((http) => ({
      http: http as Http,
      agent: new (http as Http).Agent({
        keepAlive: true,
        keepAliveMsecs: 30_000,
        maxSockets: options.connections,
      }),
    })));
  const inflight = new Set<import("node:http").ClientRequest>();
  return {
    async request(req) {
      const { http, agent } = await open();
      return new Promise<TransportAnswer>((resolve, reject) => {
        // Host names the URL's host (and port), as undici sends it, also through a socket.
        const headers: Record<string, string> = { host: url.host, ...req.headers };
        if (typeof req.body === "string") headers["content-length"] = String(Buffer.byteLength(req.body));
        const outgoing = http.request({
          method: req.method,
          path: req.path,
          headers,
          agent,
          ...(options.socketPath === undefined
            ? { host: url.hostname.replace(/^\[|\]$/g, ""), port: url.port || (secure ? 443 : 80) }
            : { socketPath: options.socketPath }),
          ...(req.signal ? { signal: req.signal } : {}),
        });
        inflight.add(outgoing);
        outgoing.once("close", () => inflight.delete(outgoing));
        outgoing.once("error", reject);
        outgoing.once("response", (res) => {
          resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
        });
        const body = req.body;
        if (body === undefined || body === null) outgoing.end();
        else if (typeof body === "string") outgoing.end(body);
        else {
          body.once("error", (err) => outgoing.destroy(err));
          body.pipe(outgoing);
        }
      });
    },
    async close() {
      if (!lib) return;
      const { agent } = await lib;
      // As undici's close: the requests under way finish first (watches are aborted by the tree).
      await Promise.all([...inflight].map((r) => new Promise((done) => r.once("close", done))));
      agent.destroy();
    },
  };
}
