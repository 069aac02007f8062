import type { Socket } from "node:net";
import { buildConnector, Client, type Dispatcher } from "undici";
import { pinnedLookup } from "./pinned-agent.js";

/** What a call's own connection is closed with once its answer is read (nothing is waiting on it). */
const CALL_OVER = new Error("the http call is over");

/**
 * One origin's connection to the address the host rules checked, opened before its request is
 * sent: an `http` tool's call connects (TCP, and TLS for https) while its started record is being
 * stored, and sends its request only once the record is (tools/impl/http.ts). Opening it sends
 * nothing of the request: undici writes the request when a request is dispatched on `dispatcher`,
 * whose first connection is this one. Every connection it makes goes to `address` (pinnedLookup).
 */
export interface PinnedConnection {
  /** Resolves once the connection is open; rejects with the connect error (nothing was sent). */
  opened: Promise<void>;
  /** Sends requests to the origin: on the opened connection first, on new ones to `address` after. */
  dispatcher: Dispatcher;
  /** Closes the connection (opened or not) and the dispatcher. */
  close(): Promise<void>;
}

/** The connect parameters undici's Client passes its connector for `url`'s origin. */
type ConnectParams = Parameters<buildConnector.connector>[0];

export function openPinned(url: URL, address: string, family: 4 | 6): PinnedConnection {
  const connector = buildConnector({ lookup: pinnedLookup(address, family) });
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  // as undici's Client connects for a request with no Host header of its own (the TLS server
  // name then comes from `host`); a request that names another host connects anew
  const params: ConnectParams = { hostname, host: url.host, protocol: url.protocol, port: url.port };
  const early = new Promise<Socket>((resolve, reject) => {
    connector(params, (err, socket) => (err ? reject(err) : resolve(socket as Socket)));
  });
  early.catch(() => {});
  let handed = false;
  const connect: buildConnector.connector = function connectPinned(options, callback) {
    // the opened connection serves the connect it was opened for; anything else gets a new one
    if (handed || !sameTarget(options, params)) return connector(options, callback);
    handed = true;
    early.then(
      (socket) => (socket.destroyed ? connector(options, callback) : callback(null, socket)),
      (err: Error) => callback(err, null),
    );
  };
  const client = new Client(url.origin, { connect });
  return {
    opened: early.then(() => undefined),
    dispatcher: client,
    async close() {
      if (!handed)
        early.then(
          (socket) => socket.destroy(),
          () => undefined,
        );
      // with an error made once: undici makes one (a stack trace, ~40 µs) when given none
      await client.destroy(CALL_OVER).catch(() => undefined);
    },
  };
}

function sameTarget(a: ConnectParams, b: ConnectParams): boolean {
  return (
    a.hostname === b.hostname &&
    a.protocol === b.protocol &&
    String(a.port) === String(b.port) &&
    (a.servername || undefined) === (b.servername || undefined)
  );
}
