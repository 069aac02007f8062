/**
 * A small HTTP/1.1 load driver for bench/http: N keep-alive connections over plain sockets, one
 * request in flight on each (no pipelining), a request picked at random for each send, for a fixed
 * time; it counts 2xx and other answers and keeps every latency for the percentiles.
 *
 * Beside autocannon (bench/http's default): on this 2-core machine the load generator shares the
 * cores with the server under test, and autocannon spends ~55 µs of CPU per request, this driver
 * ~22 (it sends pre-encoded requests and parses only the status line and the framing, Content-Length
 * or chunked). `bench/http --driver builtin` runs it: it shows how a server does when the load
 * takes less of the machine.
 */
import { connect, type Socket } from "node:net";

export interface LoadRequest {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface LoadOptions {
  /** `http://host:port`. */
  url: string;
  connections: number;
  seconds: number;
  /** The requests to choose from; each send picks one at random. */
  requests: readonly LoadRequest[];
}

export interface LoadResult {
  /** Answers with a 2xx status. */
  ok: number;
  /** Answers with any other status. */
  non2xx: number;
  /** Connections that failed or closed under a request (each one is reopened). */
  errors: number;
  /** Seconds from the first send to the last answer counted. */
  duration: number;
  /** Latency percentiles of all answers, ms. */
  p50: number;
  p99: number;
}

/** The request as bytes on the wire, once. */
export function encodeRequest(host: string, r: LoadRequest): Buffer {
  const body = r.body === undefined ? undefined : Buffer.from(r.body);
  let head = `${r.method} ${r.path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(r.headers ?? {})) head += `${name}: ${value}\r\n`;
  if (body !== undefined) head += `content-length: ${body.length}\r\n`;
  head += "\r\n";
  return body === undefined
    ? Buffer.from(head, "latin1")
    : Buffer.concat([Buffer.from(head, "latin1"), body]);
}

const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");

/**
 * How many bytes of `buf` (from `start`) the next complete response takes, and its status; or
 * undefined when it has not all arrived yet. Throws on what is not HTTP/1.1.
 */
export function parseResponse(buf: Buffer, start = 0): { length: number; status: number } | undefined {
  const headEnd = buf.indexOf(HEAD_END, start);
  if (headEnd < 0) return undefined;
  const head = buf.toString("latin1", start, headEnd + 2).toLowerCase();
  if (!head.startsWith("http/1."))
    throw new Error(`not an HTTP/1.x response: ${JSON.stringify(head.slice(0, 40))}`);
  const status = Number(head.slice(9, 12));
  let at = headEnd + 4;
  // A 1xx, 204 or 304 answer has no body whatever its headers say.
  if (status < 200 || status === 204 || status === 304) return { length: at - start, status };
  const cl = head.indexOf("\r\ncontent-length:");
  if (cl >= 0) {
    const length = Number.parseInt(head.slice(cl + 17, head.indexOf("\r\n", cl + 2)).trim(), 10);
    return at + length <= buf.length ? { length: at + length - start, status } : undefined;
  }
  if (!/\r\ntransfer-encoding:[^\r]*chunked/.test(head))
    throw new Error("a response with neither Content-Length nor chunked framing");
  // Chunks: size in hex, CRLF, data, CRLF; a zero size ends them, then trailers and a blank line.
  for (;;) {
    const lineEnd = buf.indexOf(CRLF, at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(buf.toString("latin1", at, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error("a malformed chunk size");
    if (size === 0) {
      const end = buf.indexOf(HEAD_END, lineEnd); // the blank line after the trailers, if any
      return end < 0 ? undefined : { length: end + 4 - start, status };
    }
    at = lineEnd + 2 + size + 2;
    if (at > buf.length) return undefined;
  }
}

/** Runs the load; resolves when every connection has had its last answer (or the time ran out). */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const { hostname, port } = new URL(o.url);
  const wire = o.requests.map((r) => encodeRequest(`${hostname}:${port}`, r));
  const latencies: number[] = [];
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  const start = performance.now();
  const stopAt = start + o.seconds * 1000;
  let last = start;

  const runConnection = () =>
    new Promise<void>((done) => {
      let socket: Socket;
      let pending: Buffer | undefined;
      let sentAt = 0;
      let stopped = false;
      const send = () => {
        if (performance.now() >= stopAt) {
          stopped = true;
          socket.end();
          return done();
        }
        sentAt = performance.now();
        socket.write(wire[Math.floor(Math.random() * wire.length)]!);
      };
      const open = () => {
        pending = undefined;
        socket = connect({ host: hostname, port: Number(port), noDelay: true });
        socket.on("connect", send);
        socket.on("data", (chunk: Buffer) => {
          pending = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
          let parsed: ReturnType<typeof parseResponse>;
          try {
            parsed = parseResponse(pending);
          } catch {
            socket.destroy();
            return;
          }
          if (parsed === undefined) return;
          const now = performance.now();
          latencies.push(now - sentAt);
          last = now;
          if (parsed.status >= 200 && parsed.status < 300) ok++;
          else non2xx++;
          pending = parsed.length < pending.length ? pending.subarray(parsed.length) : undefined;
          send();
        });
        socket.on("error", () => {}); // counted on close
        socket.on("close", () => {
          if (stopped) return;
          errors++;
          if (performance.now() >= stopAt) {
            stopped = true;
            done();
          } else setTimeout(open, 10);
        });
      };
      open();
    });

  await Promise.all(Array.from({ length: o.connections }, runConnection));
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return { ok, non2xx, errors, duration: (last - start) / 1000, p50: pct(0.5), p99: pct(0.99) };
}
