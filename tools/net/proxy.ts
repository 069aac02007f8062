import { chmod, rm } from "node:fs/promises";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from "node:http";
import { connect, type Socket } from "node:net";
import path from "node:path";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import {
  type HostLookup,
  type NetTarget,
  resolveTarget,
  targetOfAuthority,
  targetOfUrl,
} from "./host-rules.js";
import { systemLookup } from "./lookup.js";

/** The socket's name inside the folder the caller gives. */
export const EGRESS_SOCKET = "egress.sock";

export interface EgressProxyOptions {
  /** A private folder (0700) the caller made; the socket is made in it, mode 0600. */
  dir: string;
  /** The run's `net` entries (host-rules.ts). */
  hosts: readonly string[];
  /** Where the entries come from in the policy, for refusals, e.g. `grants.default.net`. */
  grantRule: string;
  logger: Logger;
  lookup?: HostLookup;
  /** This machine's addresses (read per request by default). */
  own?: () => readonly string[];
  /** Connections held at once (clients); more are dropped. */
  maxConnections?: number;
  /** A connection or tunnel with no traffic this long is closed. */
  idleTimeoutMs?: number;
  /** The largest request head accepted. */
  maxHeaderBytes?: number;
}

export interface EgressProxy {
  socketPath: string;
  /** Stops listening, ends every connection and tunnel, removes the socket. */
  close(): Promise<void>;
}

/** Headers of one hop only, never forwarded (RFC 9110 §7.6.1), and the proxy's own. */
const HOP_HEADERS = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/**
 * The egress proxy of one call: a Unix socket commands in the sandbox reach as HTTP_PROXY and
 * HTTPS_PROXY, speaking CONNECT (tunnels, for https) and absolute-URI plain HTTP. Each target is
 * checked by the host rules (names resolved here, outside the sandbox) and connected to at the
 * address that was checked; anything else is answered 403 with a body naming the host and the grant.
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const { logger, hosts, grantRule } = options;
  const idleMs = options.idleTimeoutMs ?? 120_000;
  const lookup = options.lookup ?? systemLookup;
  const socketPath = path.join(options.dir, EGRESS_SOCKET);
  const open = new Set<Duplex>();
  const track = (s: Duplex) => {
    open.add(s);
    s.once("close", () => open.delete(s));
  };

  async function check(target: NetTarget) {
    const resolved = await resolveTarget(target, hosts, {
      lookup,
      ...(options.own ? { own: options.own } : {}),
    });
    if (resolved.ok)
      logger.debug({ host: target.host, port: target.port, address: resolved.address }, "egress allowed");
    else logger.info({ host: target.host, port: target.port, code: resolved.code }, "egress refused");
    return resolved;
  }

  function refusal(reason: string): string {
    return `byteseek egress proxy: refused. ${reason}. The run's network grant is ${grantRule}; a person adds a host to it in /byteseek/policy.\n`;
  }

  async function onConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    // the server's own socket (idle timeout set on connection), handed over for the tunnel
    track(client);
    client.on("error", () => client.destroy());
    const target = targetOfAuthority(req.url ?? "");
    if (!target)
      return answerRaw(client, 400, `byteseek egress proxy: CONNECT needs host:port, got ${req.url}\n`);
    const resolved = await check(target);
    if (!resolved.ok)
      return answerRaw(client, resolved.code === "denied" ? 403 : 502, refusal(resolved.reason));
    const upstream = connect({ host: resolved.address, port: target.port });
    track(upstream);
    upstream.setTimeout(idleMs, () => upstream.destroy());
    let established = false;
    upstream.once("connect", () => {
      established = true;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", (err) => {
      if (established) return;
      const why = `byteseek egress proxy: ${target.host}:${target.port} did not answer (${err.message})\n`;
      answerRaw(client, 502, why);
    });
    upstream.on("close", () => {
      if (established) client.destroy();
    });
    client.on("close", () => upstream.destroy());
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL | undefined;
    try {
      url = new URL(req.url ?? "");
    } catch {
      url = undefined;
    }
    if (url?.protocol !== "http:")
      return answer(
        res,
        400,
        "byteseek egress proxy: send an absolute http:// URL, or CONNECT host:port for https\n",
      );
    const target = targetOfUrl(url);
    const resolved = await check(target);
    if (!resolved.ok) return answer(res, resolved.code === "denied" ? 403 : 502, refusal(resolved.reason));
    const upstream = request({
      host: resolved.address,
      port: target.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...forwardable(req.headers), host: url.host, connection: "close" },
      agent: false,
      setHost: false,
    });
    upstream.setTimeout(idleMs, () => upstream.destroy(new Error("idle timeout")));
    upstream.on("socket", (s) => track(s));
    upstream.on("response", (up) => {
      res.writeHead(up.statusCode ?? 502, forwardable(up.headers));
      // a host that hangs up mid-body ends the client's answer too (never an unhandled error)
      up.on("error", () => res.destroy());
      up.on("aborted", () => res.destroy());
      up.pipe(res);
    });
    // a client that goes away ends its upstream request
    req.on("error", () => upstream.destroy());
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.on("error", (err) => {
      if (!res.headersSent)
        answer(res, 502, `byteseek egress proxy: ${url.host} did not answer (${err.message})\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  }

  const server = createServer({
    maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
    headersTimeout: 10_000,
    requestTimeout: 0,
    keepAliveTimeout: 5_000,
  });
  server.maxConnections = options.maxConnections ?? 64;
  server.on("connection", (s: Socket) => {
    track(s);
    s.setTimeout(idleMs, () => s.destroy());
  });
  server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
    onConnect(req, client, head).catch((err: unknown) => {
      logger.warn({ err }, "egress tunnel failed");
      client.destroy();
    });
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    onRequest(req, res).catch((err: unknown) => {
      logger.warn({ err }, "egress request failed");
      res.destroy();
    });
  });
  server.on("clientError", (_err, s: Duplex) => answerRaw(s, 400, "byteseek egress proxy: bad request\n"));

  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await chmod(socketPath, 0o600);
  logger.debug({ socketPath, hosts }, "egress proxy listening");

  let closed: Promise<void> | undefined;
  return {
    socketPath,
    close() {
      closed ??= (async function closeProxy() {
        const done = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const s of open) s.destroy();
        await done;
        await rm(socketPath, { force: true });
      })();
      return closed;
    },
  };
}

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase()),
  );
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined && !HOP_HEADERS.has(k) && !named.has(k)) out[k] = v;
  return out;
}

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  res.end(body);
}

/** An answer on a socket the HTTP server has let go of (CONNECT, client errors). */
function answerRaw(socket: Duplex, status: number, body: string): void {
  if (!socket.writable) return void socket.destroy();
  const reason = status === 403 ? "Forbidden" : status === 400 ? "Bad Request" : "Bad Gateway";
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
