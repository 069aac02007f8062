/**
 * One store folder, many MCP sessions. LevelDB lets one process hold a folder, and a host starts a
 * stdio server per session, so a second session on the same project would find the folder locked.
 * The process that holds a folder (a `byteseek mcp`, or `byteseek serve`) therefore listens on a
 * Unix socket beside the store, and a `byteseek mcp` that finds the folder locked relays its
 * client's stdio there (cli/mcp-relay.ts): the holder serves each relayed connection as a stdio
 * connection of its own — the SDK's stdio entry over the socket — through its one runtime, group
 * commit and watch.
 *
 * Who may connect: the socket is made with mode 0600 (only this user, who can open the store's
 * files anyway), in the store folder or, when that path is too long for a socket, in a private
 * folder of this user's (0700, checked); and a relay must carry the holder's credential, as an HTTP
 * client on the same socket must (the store's token, `<store>/token`, or BYTESEEK_TOKEN): a command
 * a run started as this user holds neither. What a relay may ask: calls run in the holder's
 * workspace, whatever the relay was started for; the holder names its workspace in its answer, and a
 * relay started for another says so on stderr (one store, one workspace: a host line written for a
 * project folder still works beside a `byteseek serve` of that store, and is told where its files
 * are). Its run id is the holder's to give, never the relay's to name: a relayed session cannot
 * act, or approve its own calls, as another run.
 *
 * The relay's first line is `{"byteseek":"relay","version":2,"workspace":…,"token"?:…}`; the holder
 * answers `{"byteseek":"ok","holder":"serve"|"mcp"|"run","workspace":…}` or
 * `{"byteseek":"refused","code":…,"message":…}`, then MCP flows as on stdio (one JSON-RPC message a line).
 *
 * The same socket carries the HTTP API, for `kvspace` and `byteseek run|chat` on a folder held
 * here (cli/open-store.ts): a connection whose first byte starts an HTTP request line (a method's
 * capital letter; a hello starts with `{`) is handed to the holder's HTTP server, with the
 * holder's token, Host guard and routes, as a TCP connection of its own would be.
 */
import { createHash } from "node:crypto";
import { chmod, lstat, mkdir, rm } from "node:fs/promises";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { z } from "zod";
import { RUN_ID } from "../tools/run-id.js";
import type { LiveTree } from "./live.js";
import { notifyInstances } from "./notify.js";
import type { McpFactory, McpInstance } from "./server.js";
import { serveConnection } from "./stdio.js";

/** The socket's name in the store folder. */
export const SHARE_SOCKET = "mcp.sock";

/** A Unix socket path holds at most 107 bytes on Linux (104 on macOS); keep below both. */
const MAX_SOCKET_PATH = 100;

/** A handshake line longer than this is not a relay's. */
const MAX_HELLO = 4096;

/** A connection that says nothing this long is dropped. */
const HELLO_TIMEOUT_MS = 5000;

export const RelayHello = z
  .object({
    byteseek: z.literal("relay"),
    version: z.literal(2),
    workspace: z.string().min(1).max(4096),
    /** The holder's credential. */
    token: z.string().max(4096).optional(),
  })
  .strict();
export type RelayHello = z.infer<typeof RelayHello>;

export const HolderAnswer = z.union([
  // What holds the store: a relay that loses a server leaves it time to restart before taking over.
  z.object({
    byteseek: z.literal("ok"),
    holder: z.enum(["serve", "mcp", "run"]).optional(),
    /** Unused: the session's run is made at its initialize (mcp-<client>-<n>, mcp/session-run.ts). */
    vid: z.string().regex(RUN_ID).optional(),
    /** Where the holder's file tools work (every relayed call runs there). */
    workspace: z.string().optional(),
  }),
  z.object({ byteseek: z.literal("refused"), code: z.string(), message: z.string() }),
]);
export type HolderAnswer = z.infer<typeof HolderAnswer>;

/** Where the holder of `folder` (an absolute store path) listens. */
export async function sharePath(folder: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const beside = join(folder, SHARE_SOCKET);
  if (Buffer.byteLength(beside) <= MAX_SOCKET_PATH) return beside;
  const dir = await privateDir(env);
  const name = createHash("sha256").update(folder).digest("hex").slice(0, 32);
  return join(dir, `${name}.sock`);
}

/**
 * What is at a holder's socket path: nothing, a socket this user made, or something else (a
 * symlink, a file, another user's socket). A client talks to a holder only through its own: a
 * socket someone else put in a shared store folder never gets a relay's session or a token.
 */
export async function socketAt(path: string): Promise<"absent" | "own" | "foreign"> {
  const st = await lstat(path).catch(() => undefined);
  if (st === undefined) return "absent";
  const uid = process.getuid?.();
  return st.isSocket() && (uid === undefined || st.uid === uid) ? "own" : "foreign";
}

/** `$XDG_RUNTIME_DIR/byteseek`, or `<tmp>/byteseek-<uid>`: made 0700, and refused when anyone else could use it. */
async function privateDir(env: NodeJS.ProcessEnv): Promise<string> {
  const uid = process.getuid?.() ?? 0;
  const base = env.XDG_RUNTIME_DIR || tmpdir();
  const dir = join(base, env.XDG_RUNTIME_DIR ? "byteseek" : `byteseek-${uid}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0)
    throw new Error(
      `${dir} is not a private folder of this user's (a folder, owned by uid ${uid}, mode 0700): remove it, or set XDG_RUNTIME_DIR to one that is`,
    );
  return dir;
}

export interface SharedMcp {
  /** Where it listens. */
  path: string;
  /** Connections open now: relays, and HTTP clients (`kvspace`). */
  connections(): number;
  /** Stops listening, closes every relayed connection (their relays go on elsewhere) and removes the socket. */
  close(): Promise<void>;
}

export interface ShareOptions {
  path: string;
  factory: McpFactory;
  live: LiveTree;
  logger: Logger;
  /** The root this process's file tools touch (absolute), told to every relay. */
  workspace: string;
  /** What this process is (told to relays): a `byteseek serve`, a `byteseek mcp` or an embedded `byteseek run|chat`. */
  holder: "serve" | "mcp" | "run";
  /** Takes a connection that speaks HTTP (its bytes so far put back): the holder's HTTP server. */
  http?: (socket: Socket) => void;
  /**
   * Whether a relay's token is the holder's credential (the same check its HTTP server makes);
   * absent: the holder asks for none (`byteseek serve --no-auth`).
   */
  credential?: (token: string | undefined) => boolean;
  /** Plain 2026-era calls answered beside the SDK (mcp/stdio.ts; default: BYTESEEK_FAST, on). */
  plainCalls?: boolean;
}

/** A hello is a JSON object; an HTTP request line starts with its method, in capitals. */
const HTTP_FIRST_BYTE = /^[A-Z]$/;

/**
 * Listens for relays on `path`; call only while holding the store (anything at `path` is a dead
 * holder's). A socket that cannot be made (the path taken by a folder, no room) is a warning, not a
 * failure: this process serves its own clients, and a `byteseek mcp` started beside it says it
 * cannot reach the holder.
 */
export async function listenShared(options: ShareOptions): Promise<SharedMcp | undefined> {
  try {
    return await listen(options);
  } catch (err) {
    options.logger.warn(
      { err, path: options.path },
      "cannot serve other byteseek mcp processes on this store: they will not start while this one holds it",
    );
    return undefined;
  }
}

async function listen(options: ShareOptions): Promise<SharedMcp> {
  const { path, factory, live, logger, workspace, holder, http, credential, plainCalls } = options;
  const open = new Map<Socket, { close(): Promise<void> } | undefined>();
  const instances = new Set<McpInstance>();

  function refuse(socket: Socket, code: string, message: string): void {
    socket.end(`${JSON.stringify({ byteseek: "refused", code, message })}\n`);
  }

  function serve(socket: Socket, rest: Buffer): void {
    socket.write(`${JSON.stringify({ byteseek: "ok", holder, workspace })}\n`);
    if (rest.length > 0) socket.unshift(rest);
    const handle = serveConnection({
      factory,
      logger,
      input: socket,
      output: socket,
      onInstance(instance) {
        instances.add(instance);
        socket.once("close", () => instances.delete(instance));
      },
      // the holder names the session's run at its initialize (mcp-<client>-<n>), never the relay
      transport: "relay",
      ...(plainCalls === undefined ? {} : { plainCalls }),
    });
    open.set(socket, handle);
    // paused since the hello; the transport listens now
    socket.resume();
  }

  function onConnection(socket: Socket): void {
    open.set(socket, undefined);
    socket.once("close", () => {
      const handle = open.get(socket);
      open.delete(socket);
      handle?.close().catch(() => {});
    });
    socket.on("error", (err) => logger.debug({ err }, "MCP relay socket error"));
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
        http(socket);
        socket.resume();
        return;
      }
      const end = seen.indexOf(10);
      if (end < 0) {
        if (seen.length > MAX_HELLO) {
          clearTimeout(timer);
          socket.off("data", onData);
          refuse(socket, "MCP_SHARE_HELLO", "the first line must be a byteseek relay's hello");
        }
        return;
      }
      clearTimeout(timer);
      socket.off("data", onData);
      socket.pause();
      let hello: RelayHello;
      try {
        hello = RelayHello.parse(JSON.parse(seen.subarray(0, end).toString("utf8")));
      } catch {
        refuse(
          socket,
          "MCP_SHARE_HELLO",
          `the first line must be a byteseek relay's hello: {"byteseek":"relay","version":2,"workspace":…,"token":…} (the holder gives the run id; a relay names none). Start byteseek mcp from the same byteseek as the holder`,
        );
        return;
      }
      if (credential && !credential(hello.token)) {
        refuse(
          socket,
          "MCP_SHARE_UNAUTHORIZED",
          hello.token === undefined
            ? "the process holding this store needs its credential: byteseek mcp reads it from the store folder's token file, or set BYTESEEK_TOKEN to the holder's token"
            : "the token is not the holder's: set BYTESEEK_TOKEN to the token the holder uses (byteseek serve prints it; it is kept in the store folder's token file unless BYTESEEK_TOKEN named one)",
        );
        return;
      }
      if (hello.workspace !== workspace)
        logger.info(
          { asked: hello.workspace, workspace },
          "a relay started for another workspace: its calls run in this holder's",
        );
      serve(socket, seen.subarray(end + 1));
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
  server.on("error", (err) => logger.warn({ err }, "MCP share socket error"));
  const unsubscribe = live.subscribe((change) => notifyInstances(instances, change));
  logger.debug({ path }, "serving MCP relays");

  return {
    path,
    connections: () => open.size,
    async close() {
      unsubscribe();
      const closed = new Promise<void>((done) => server.close(() => done()));
      for (const [socket, handle] of open) {
        await handle?.close().catch(() => {});
        socket.destroy();
      }
      await closed;
      await rm(path, { force: true });
    },
  };
}
