/**
 * The HTTP server byteseek listens with: Node's own, made to stop promptly. When it closes, Node
 * (20) closes only the keep-alive connections that sit between two requests; it waits for every
 * other one, for as long as its client keeps it open:
 * - a connection whose client has not sent a request yet (Node counts it busy from the start, for
 *   its headers timeout) — undici opens one after a streamed answer is aborted, as an MCP client
 *   that disconnects from its GET or listen stream does;
 * - a connection whose answer was still being written when the close began (an MCP notification
 *   stream, a watch, a long call): once that answer ends (the app's preClose hooks end the
 *   streams), Node keeps the connection open for the next request, up to the keep-alive timeout
 *   (72 s), and its client — told `keep-alive: timeout=72` — keeps it as long.
 * Either held `byteseek serve` about 70 s after a SIGTERM. This server counts the requests in
 * flight on each connection, and from the close on ends every connection as soon as it has none:
 * an answer still being written is finished first (with `connection: close` when its headers are
 * not out yet), never cut off mid-write.
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http";
import type { Socket } from "node:net";

/**
 * An HTTP server (`node:http` `createServer(listener)`) whose `close()` ends idle connections,
 * fresh ones included, and each busy one once its last answer is done.
 */
export function createClosingServer(listener: RequestListener): Server {
  /** Requests in flight on each open connection. */
  const connections = new Map<Socket, number>();
  /** Answers whose headers may still be unwritten. */
  const answers = new Set<ServerResponse>();
  let closing = false;

  function settle(socket: Socket) {
    if (closing && connections.get(socket) === 0) socket.destroy();
  }

  const server = createServer(function tracked(req: IncomingMessage, res: ServerResponse) {
    const socket = req.socket;
    connections.set(socket, (connections.get(socket) ?? 0) + 1);
    if (closing) res.shouldKeepAlive = false;
    else answers.add(res);
    res.once("close", function answered() {
      answers.delete(res);
      const inFlight = connections.get(socket);
      if (inFlight === undefined) return;
      connections.set(socket, inFlight - 1);
      // after Node's own end of the answer (it runs first): nothing is left to write on it
      settle(socket);
    });
    listener(req, res);
  });
  // also the connections handed in with emit("connection") (mcp/share.ts relays)
  server.on("connection", function track(socket: Socket) {
    connections.set(socket, 0);
    socket.once("close", () => connections.delete(socket));
  });

  // Node's close() calls closeIdleConnections(), and so does fastify's: both come here.
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = function closeIdleConnections() {
    closing = true;
    closeIdle();
    for (const res of answers) if (!res.headersSent) res.shouldKeepAlive = false;
    answers.clear();
    for (const socket of connections.keys()) settle(socket);
  };
  return server;
}
