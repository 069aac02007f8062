/**
 * The holder's side of a held folder's socket (tree/held-socket.ts): made 0600 at the path, each
 * connection sorted by its first byte — HTTP to the holder's HTTP server, a relay's hello checked
 * (its shape, the holder's credential) and answered, then the connection handed to whoever serves
 * relayed sessions (mcp/share.ts serves MCP over them). Everything here is about the folder and who
 * may use it; nothing about what flows once a relay is let in.
 */
import { chmod, rm } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import type { Logger } from "pino";
import { type Holder, RelayHello } from "./held-socket.js";

/** A handshake line longer than this is not a relay's. */
const MAX_HELLO = 4096;

/** A connection that says nothing this long is dropped. */
const HELLO_TIMEOUT_MS = 5000;

/** A hello is a JSON object; an HTTP request line starts with its method, in capitals. */
const HTTP_FIRST_BYTE = /^[A-Z]$/;

/**
 * The codes of a refused hello. They keep their first names (relays of every version read them):
 * the socket was MCP's before it was the store's.
 */
export const HELD_REFUSALS = {
  hello: "MCP_SHARE_HELLO",
  unauthorized: "MCP_SHARE_UNAUTHORIZED",
} as const;

/** A relayed connection being served: closed when its socket closes or the holder stops. */
export interface RelayHandle {
  close(): Promise<void>;
}

export interface HeldSocketOptions {
  path: string;
  logger: Logger;
  /** The root this process's file tools touch (absolute), told to every relay. */
  workspace: string;
  /** What this process is (told to relays): a `byteseek serve`, a `byteseek mcp` or an embedded `byteseek run|chat`. */
  holder: Holder;
  /**
   * Takes a connection that speaks HTTP (its bytes so far put back): the holder's HTTP server. The
   * socket stays paused until what it answers settles: a holder may build its server at the first
   * connection (cli/hold-share.ts); when that fails, the connection is dropped.
   */
  http?: (socket: Socket) => void | Promise<void>;
  /**
   * Whether a relay's token is the holder's credential (the same check its HTTP server makes);
   * absent: the holder asks for none (`byteseek serve --no-auth`).
   */
  credential?: (token: string | undefined) => boolean;
  /**
   * Serves a relay let in: called after the holder's `ok` is written, with the socket paused and the
   * bytes after the hello put back; the handle is closed when the socket closes. The socket stays
   * paused until the handle is there (a holder may load its relay server at the first relay).
   */
  relay: (socket: Socket) => RelayHandle | Promise<RelayHandle>;
}

export interface HeldSocket {
  /** Where it listens. */
  path: string;
  /** Connections open now: relays, and HTTP clients (`kvspace`). */
  connections(): number;
  /** Stops listening, closes every relayed connection (their relays go on elsewhere) and removes the socket. */
  close(): Promise<void>;
}

/**
 * Listens on `path`; call only while holding the store (anything at `path` is a dead holder's). A
 * socket that cannot be made (the path taken by a folder, no room) is a warning, not a failure:
 * this process serves its own clients, and a process started beside it says it cannot reach the
 * holder.
 */
export async function listenHeld(options: HeldSocketOptions): Promise<HeldSocket | undefined> {
  try {
    return await listen(options);
  } catch (err) {
    options.logger.warn(
      { err, path: options.path },
      "cannot share this store with other byteseek processes: they will not start while this one holds it",
    );
    return undefined;
  }
}

async function listen(options: HeldSocketOptions): Promise<HeldSocket> {
  const { path, logger, http } = options;
  const open = new Map<Socket, RelayHandle | Promise<RelayHandle> | undefined>();

  /** Lets `socket` flow once whoever took it listens (`taken` settled); one that could not take it drops it. */
  function resumeWhen(socket: Socket, taken: unknown): void {
    if (!(taken instanceof Promise)) return void socket.resume();
    taken.then(
      () => socket.resume(),
      (err: unknown) => {
        logger.warn({ err }, "the held store socket could not serve a connection");
        socket.destroy();
      },
    );
  }

  function onConnection(socket: Socket): void {
    open.set(socket, undefined);
    socket.once("close", () => {
      const handle = open.get(socket);
      open.delete(socket);
      void closeHandle(handle);
    });
    socket.on("error", (err) => logger.debug({ err }, "held store socket error"));
    let seen: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), HELLO_TIMEOUT_MS);
    timer.unref();
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      if (http && HTTP_FIRST_BYTE.test(String.fromCharCode(seen[0]!))) {
        clearTimeout(timer);
        socket.off("data", onData);
        socket.pause();
        socket.unshift(seen);
        resumeWhen(socket, http(socket));
        return;
      }
      const end = seen.indexOf(10);
      if (end < 0) {
        if (seen.length > MAX_HELLO) {
          clearTimeout(timer);
          socket.off("data", onData);
          refuse(socket, HELD_REFUSALS.hello, "the first line must be a byteseek relay's hello");
        }
        return;
      }
      clearTimeout(timer);
      socket.off("data", onData);
      socket.pause();
      const rest = seen.subarray(end + 1);
      const hello = admit(socket, seen.subarray(0, end), options);
      if (hello === undefined) return;
      socket.write(
        `${JSON.stringify({ byteseek: "ok", holder: options.holder, workspace: options.workspace })}\n`,
      );
      if (rest.length > 0) socket.unshift(rest);
      const handle = options.relay(socket);
      open.set(socket, handle);
      // paused since the hello; the relay's reader listens once its handle is there
      resumeWhen(socket, handle);
    };
    socket.on("data", onData);
  }

  await rm(path, { force: true });
  const server = createServer(onConnection);
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    // The socket is made 0600 from the start: no moment in which another user could connect.
    const umask = process.umask(0o177);
    try {
      server.listen(path, () => {
        server.off("error", fail);
        done();
      });
    } finally {
      process.umask(umask);
    }
  });
  await chmod(path, 0o600);
  server.on("error", (err) => logger.warn({ err }, "held store socket error"));
  logger.debug({ path }, "sharing the held store");

  return {
    path,
    connections: () => open.size,
    async close() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      for (const [socket, handle] of open) {
        await closeHandle(handle);
        socket.destroy();
      }
      await closed;
      await rm(path, { force: true });
    },
  };
}

/** Closes a relay's handle, one still being made once it is there; never throws. */
async function closeHandle(handle: RelayHandle | Promise<RelayHandle> | undefined): Promise<void> {
  try {
    await (await handle)?.close();
  } catch {
    // a relay that failed to start or to close has nothing left to close
  }
}

function refuse(socket: Socket, code: string, message: string): void {
  socket.end(`${JSON.stringify({ byteseek: "refused", code, message })}\n`);
}

/** The hello on `line` when it is a relay's and carries the holder's credential; otherwise the refusal is sent. */
function admit(socket: Socket, line: Buffer, options: HeldSocketOptions): RelayHello | undefined {
  let hello: RelayHello;
  try {
    hello = RelayHello.parse(JSON.parse(line.toString("utf8")));
  } catch {
    refuse(
      socket,
      HELD_REFUSALS.hello,
      `the first line must be a byteseek relay's hello: {"byteseek":"relay","version":2,"workspace":…,"token":…} (the holder gives the run id; a relay names none). Start byteseek mcp from the same byteseek as the holder`,
    );
    return undefined;
  }
  if (options.credential && !options.credential(hello.token)) {
    refuse(
      socket,
      HELD_REFUSALS.unauthorized,
      hello.token === undefined
        ? "the process holding this store needs its credential: byteseek mcp reads it from the store folder's token file, or set BYTESEEK_TOKEN to the holder's token"
        : "the token is not the holder's: set BYTESEEK_TOKEN to the token the holder uses (byteseek serve prints it; it is kept in the store folder's token file unless BYTESEEK_TOKEN named one)",
    );
    return undefined;
  }
  if (hello.workspace !== options.workspace)
    options.logger.info(
      { asked: hello.workspace, workspace: options.workspace },
      "a relay started for another workspace: its calls run in this holder's",
    );
  return hello;
}
