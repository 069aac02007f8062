/**
 * `byteseek mcp` on a folder another process holds: this client's stdio relayed, line for line, to
 * the holder's socket (tree/held-socket.ts; served by mcp/share.ts), which serves it through its own runtime.
 *
 * The holder may go away while this client stays (it was another session's `byteseek mcp`, and that
 * session ended). Then the relay answers the requests still in flight with an error saying they may
 * have run, lets `takeOver` try to hold the store itself (or another relay does), connects to
 * whoever holds it now and replays what the client's session is made of — its opening (`initialize`
 * and `notifications/initialized`), its resource subscriptions and log level, each answered to
 * nobody — and its open `subscriptions/listen` streams (as sent: their events keep coming under the
 * client's own id), so the client goes on as if nothing happened.
 */
import { connect, type Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { fastLanesByDefault } from "../tree/fast-lanes.js";
import {
  HOLDER_RESTART_GRACE_MS,
  type Holder,
  HolderAnswer,
  type RelayHello,
  socketAt,
} from "../tree/held-socket.js";
import { CliError } from "./errors.js";

export interface RelayOptions {
  /** The holder's socket. */
  path: string;
  /** The hello, less the credential. */
  hello: Omit<RelayHello, "token">;
  /** The holder's credential, asked for before each hello (a new holder may have made it meanwhile). */
  token(): Promise<string | undefined>;
  /** Told, for each holder reached, what it is and the workspace its calls run in. */
  onAttached?(holder: Omit<Reached, "socket">): void;
  stdin: Readable;
  stdout: Writable;
  logger: Logger;
  /** Tries to hold the store (and listen on `path`) itself; true when it now does. */
  takeOver(): Promise<boolean>;
  /** How long to keep trying to reach a holder after losing one, ms (default 10 s). */
  patienceMs?: number;
  /**
   * After losing a `byteseek serve`, how long to only wait for a holder before taking the store
   * over, ms (default 5 s): a server being restarted gets its folder back.
   */
  serverGraceMs?: number;
  /**
   * Read ids off the SDKs' usual line shapes (the relay's fast lane, `sniffLine`); false: parse
   * every line (`parseLine`, the reference lane). Default: BYTESEEK_FAST (on; tree/fast-lanes.ts).
   */
  sniff?: boolean;
}

type Id = string | number;

interface Message {
  id?: Id;
  method?: string;
}

/** The id a replayed request carries, so its answer is known and kept from the client. */
const REPLAY_ID = "byteseek-relay-replay";

/** Requests whose effect is the session's state, not an answer: a new holder is sent them again. */
const SETUP_METHODS = new Set(["resources/subscribe", "resources/unsubscribe", "logging/setLevel"]);

/** Relays until the client closes stdin; throws a CliError when no holder can be reached or one refuses. */
export async function relayMcp(options: RelayOptions): Promise<void> {
  const { stdin, stdout, logger } = options;
  const patienceMs = options.patienceMs ?? 10_000;
  const classify: Classify = (options.sniff ?? fastLanesByDefault()) ? sniffLine : parseLine;
  /** The client's first request and its `initialized`, replayed to a new holder. */
  let opening: (Message & Record<string, unknown>) | undefined;
  let openingLine: string | undefined;
  let initialized: string | undefined;
  /** Requests sent and not yet answered, by their id as JSON; a listen stream's line, sent again to a new holder. */
  const pending = new Map<string, { id: Id; listen?: string }>();
  /** Requests that set up the session (subscriptions, log level), replayed in order to a new holder. */
  const setup: Array<Message & Record<string, unknown>> = [];
  /** Lines the client sent while no holder was connected. */
  const queued: string[] = [];
  let socket: Socket | undefined;
  let ended = false;
  let replays = 0;
  let attached = 0;
  /** What held the store last: a lost server is given time to come back. */
  let holder: Holder | undefined;

  const clientEnded = new Promise<void>((done) => {
    const end = () => {
      ended = true;
      socket?.end();
      done();
    };
    stdin.once("end", end);
    stdin.once("close", end);
  });

  readBlocks(stdin, (block) => {
    for (const line of lines(block)) {
      const seen = classify(line, "client");
      if (seen.kind === "request" && seen.id !== undefined) {
        const method = seen.message?.method ?? methodOf(line);
        pending.set(JSON.stringify(seen.id), {
          id: seen.id,
          ...(method === "subscriptions/listen" ? { listen: line } : {}),
        });
        if (opening === undefined) {
          opening = seen.message ?? parse(line);
          openingLine = line;
        } else if (method !== undefined && SETUP_METHODS.has(method)) {
          const message = seen.message ?? parse(line);
          if (message) setup.push(message);
        }
      } else if (seen.kind === "initialized") initialized = line;
    }
    if (socket) socket.write(block);
    else queued.push(block);
  });

  /** Answers what was in flight when a holder went away: it may have run, so it is not sent again (a listen stream is). */
  function failPending(): void {
    for (const [key, { id, listen }] of pending) {
      if (listen !== undefined) continue;
      pending.delete(key);
      const message =
        "the byteseek process serving this store went away during the request; it may have run (a call's record is under /byteseek/tool/<vid>/): check, then try again";
      stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message } })}\n`);
    }
  }

  async function attach(): Promise<Socket> {
    const grace = holder === "serve" ? (options.serverGraceMs ?? HOLDER_RESTART_GRACE_MS) : 0;
    const reached = await reach(options, patienceMs, grace);
    const s = reached.socket;
    holder = reached.holder;
    options.onAttached?.({ holder: reached.holder, workspace: reached.workspace });
    s.on("error", (err) => logger.debug({ err }, "relay socket error"));
    // A holder after the first has not seen the opening (unless it is still waiting in the queue).
    if (
      attached++ > 0 &&
      opening !== undefined &&
      !queued.some((block) => block.includes(openingLine as string))
    ) {
      const replay = (message: Record<string, unknown>) =>
        s.write(`${JSON.stringify({ ...message, id: `${REPLAY_ID}-${++replays}` })}\n`);
      replay(opening);
      if (initialized !== undefined) s.write(`${initialized}\n`);
      for (const message of setup) replay(message);
      for (const { listen } of pending.values()) if (listen !== undefined) s.write(`${listen}\n`);
    }
    readBlocks(s, (block) => {
      let out = block;
      for (const line of lines(block)) {
        const seen = classify(line, "holder");
        if (seen.kind !== "response" || seen.id === undefined) continue;
        if (typeof seen.id === "string" && seen.id.startsWith(REPLAY_ID)) out = out.replace(`${line}\n`, "");
        else pending.delete(JSON.stringify(seen.id));
      }
      if (out !== "") stdout.write(out);
    });
    for (const block of queued.splice(0)) s.write(block);
    return s;
  }

  socket = await attach();
  for (;;) {
    const current = socket;
    await new Promise<void>((done) => {
      current.once("close", () => done());
    });
    socket = undefined;
    if (ended) return;
    logger.info("the process holding the store went away: reaching its successor");
    failPending();
    socket = await attach();
    if (ended) {
      socket.end();
      await clientEnded;
      return;
    }
  }
}

/**
 * Connects and says hello. No holder (it went away, or the folder is held by a moment's `kvspace`
 * command): take the store over, or wait for whoever does, for up to `patienceMs`.
 */
async function reach(options: RelayOptions, patienceMs: number, graceMs: number): Promise<Reached> {
  const start = Date.now();
  const deadline = start + Math.max(patienceMs, graceMs + 1000);
  let wait = 10;
  for (;;) {
    try {
      return await hello(options);
    } catch (err) {
      if (err instanceof CliError) throw err;
      if (Date.now() >= deadline)
        throw new CliError(
          "CLI_MCP_HOLDER_GONE",
          `cannot reach the byteseek process holding the store (${options.path}): ${(err as Error).message}. Start byteseek mcp again`,
          { cause: err },
        );
    }
    if (Date.now() - start >= graceMs && (await options.takeOver())) continue;
    await new Promise((done) => setTimeout(done, wait));
    wait = Math.min(wait * 2, 200);
  }
}

export interface Reached {
  socket: Socket;
  holder: Holder | undefined;
  /** The holder's workspace, where this session's calls run. */
  workspace: string | undefined;
}

/** One connection and its hello; a refusal is a CliError (final), anything else may pass with a retry. */
async function hello(options: RelayOptions): Promise<Reached> {
  // A socket at the path that this user did not make is never talked to (a shared folder).
  if ((await socketAt(options.path)) === "foreign")
    throw new CliError(
      "CLI_MCP_REFUSED",
      `${options.path} is not a socket this user made (a symlink, or another user's): byteseek mcp does not relay there. Remove it, or give this session a store of its own (KVSPACE)`,
    );
  const token = await options.token();
  const hello: RelayHello = { ...options.hello, ...(token === undefined ? {} : { token }) };
  return new Promise((done, fail) => {
    const s = connect(options.path);
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      const end = seen.indexOf(10);
      if (end < 0) return;
      s.off("data", onData);
      s.off("close", onClose);
      s.off("error", fail);
      s.pause();
      if (end + 1 < seen.length) s.unshift(seen.subarray(end + 1));
      const answer = HolderAnswer.safeParse(parse(seen.subarray(0, end).toString("utf8")));
      if (!answer.success) {
        s.destroy();
        return fail(new Error("the socket answered something other than a byteseek holder"));
      }
      if (answer.data.byteseek === "refused") {
        s.destroy();
        return fail(new CliError("CLI_MCP_REFUSED", answer.data.message));
      }
      done({ socket: s, holder: answer.data.holder, workspace: answer.data.workspace });
    };
    const onClose = () => fail(new Error("the holder closed the connection"));
    s.once("error", fail);
    s.once("close", onClose);
    s.on("data", onData);
    s.write(`${JSON.stringify(hello)}\n`);
  });
}

/** Calls `onBlock` with the complete lines each read brings (newlines kept; a partial line waits for its end). */
function readBlocks(stream: Readable, onBlock: (block: string) => void): void {
  let rest = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const text = rest === "" ? chunk : rest + chunk;
    const end = text.lastIndexOf("\n");
    if (end < 0) {
      rest = text;
      return;
    }
    rest = text.slice(end + 1);
    onBlock(end === text.length - 1 ? text : text.slice(0, end + 1));
  });
  stream.resume();
}

/** The non-empty lines of a block. */
function* lines(block: string): Generator<string> {
  let start = 0;
  for (let end = block.indexOf("\n"); end >= 0; end = block.indexOf("\n", start)) {
    const line = block.slice(start, end > start && block.charCodeAt(end - 1) === 13 ? end - 1 : end);
    if (line !== "") yield line;
    start = end + 1;
  }
}

/**
 * A message's top-level id when it is the last member, as the SDKs write requests
 * (`{"method":…,"params":…,"jsonrpc":"2.0","id":…}`) and results (`{"result":…,"jsonrpc":"2.0","id":…}`).
 * A raw `,"` cannot occur inside a JSON string (its quotes are escaped), and the closing brace
 * ends the line, so this member is the outer object's.
 */
const TAIL_ID = /,"jsonrpc":"2\.0","id":(-?\d{1,15}|"[A-Za-z0-9_.:-]{1,64}")\}$/;

export interface Seen {
  kind: "request" | "response" | "initialized" | "other";
  id?: Id;
  message?: Message & Record<string, unknown>;
}

/**
 * What a line is, as far as the relay cares: from the client, requests (kept until answered) and
 * `initialized`; from the holder, responses. Two implementations answer alike for every line:
 * `parseLine` parses it (the reference lane), `sniffLine` reads the SDKs' usual shapes off the
 * line's ends and parses only the rest (the fast lane).
 */
type Classify = (line: string, from: "client" | "holder") => Seen;

/** The reference lane: every line parsed. */
export function parseLine(line: string, from: "client" | "holder"): Seen {
  const message = parse(line);
  if (message === undefined) return { kind: "other" };
  const hasId = typeof message.id === "string" || typeof message.id === "number";
  if (from === "client") {
    if (typeof message.method === "string" && hasId)
      return { kind: "request", id: message.id as Id, message };
    if (message.method === "notifications/initialized") return { kind: "initialized" };
    return { kind: "other" };
  }
  return message.method === undefined && hasId
    ? { kind: "response", id: message.id as Id }
    : { kind: "other" };
}

/** The fast lane: the SDKs' usual shapes read off the line's ends; anything else parsed. */
export function sniffLine(line: string, from: "client" | "holder"): Seen {
  const expected = from === "client" ? '{"method":"' : '{"result":';
  if (line.startsWith(expected)) {
    const tail = TAIL_ID.exec(line.length > 120 ? line.slice(-120) : line);
    if (tail) {
      const raw = tail[1] as string;
      const id = raw.startsWith('"') ? raw.slice(1, -1) : Number(raw);
      return { kind: from === "client" ? "request" : "response", id };
    }
  } else if (from === "holder" && line.startsWith('{"method":"')) return { kind: "other" };
  return parseLine(line, from);
}

/** The method of a request line in the SDKs' shape (`{"method":"…",…`). */
function methodOf(line: string): string | undefined {
  const end = line.indexOf('"', 11);
  return line.startsWith('{"method":"') && end > 11 ? line.slice(11, end) : undefined;
}

function parse(line: string): (Message & Record<string, unknown>) | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Message & Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
