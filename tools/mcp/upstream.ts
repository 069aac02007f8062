/**
 * The pool of upstream MCP servers' processes and connections: start on first use, reuse, restart
 * with backoff after a crash, stop when idle, end with byteseek. Over 400 lines because the pool's
 * state machine (start, crash, stop and close racing each other) reads best in one place.
 */
import { randomBytes } from "node:crypto";
import { realpath } from "node:fs/promises";
import path from "node:path";
import {
  Client,
  type ClientOptions,
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import type { Logger } from "pino";
import { ToolError } from "../errors.js";
import { endMarkedProcesses } from "../process/contain.js";
import { buildCommandEnv } from "../process/env.js";
import type { OutOfMemory } from "../sandbox/cgroup.js";
import { outOfMemoryDetails, outOfMemoryMessage } from "../sandbox/exit.js";
import { signInFailure } from "./oauth/failure.js";
import { isStdio, type McpServerEntry, type StdioEntry } from "./registry.js";
import type { UpstreamConnector } from "./upstream-http.js";
import { SamePipeStdioTransport } from "./upstream-stdio.js";

/** What an upstream is doing, as `kvspace mcp list` and the web page show it. */
export type UpstreamState = "stopped" | "starting" | "running" | "stopping" | "backoff" | "failed";

export interface UpstreamStatus {
  server: string;
  state: UpstreamState;
  /** The stdio process, while one runs. */
  pid?: number;
  /** Why it last failed to start or stopped unasked. */
  error?: string;
  /** Crashes since it last ran a minute without one. */
  crashes: number;
  /** When a restart after a crash is allowed (ms since the epoch). */
  retryAt?: number;
  /** The protocol revision spoken with it while connected (2026-07-28, or the 2025 one it answered). */
  protocol?: string;
}

/** The default time an unused stdio server keeps running. */
export const DEFAULT_IDLE_STOP_MS = 300_000;
/** The default time to start a server and answer a request of the sync. */
export const DEFAULT_START_TIMEOUT_MS = 30_000;
/**
 * The default time a stdio server is given to answer the 2026-07-28 probe (server/discover) before
 * it is taken for a 2025 one: some 2025 servers never answer a request before `initialize`, and
 * the SDK would otherwise wait the whole start timeout. The probe is the first thing on the pipe,
 * so the server's own start counts: byteseek's `byteseek mcp` in its sandbox took over 3 s to
 * answer on a loaded 2-core machine, hence not less.
 */
export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;
/**
 * How long a stdio server is given to exit once its stdin is closed before it is sent SIGTERM. The
 * SDK's close waits 2 s, which a server that stays up when its input ends (timers of its own, as
 * server-everything's) spent doing nothing, and every stop waited out: a restart, an idle stop,
 * `kvspace call` and `kvspace mcp sync` before they exit. A server that ends on its input's end does
 * so in a fraction of this; a sandboxed one is ended whole by the SIGTERM either way (bubblewrap's
 * --die-with-parent).
 */
export const STOP_GRACE_MS = 500;
/** First wait before restarting a crashed server; doubles per crash, up to MAX_BACKOFF_MS. */
const BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
/** Running this long without a crash forgets earlier crashes. */
const STABLE_MS = 60_000;
/** The last bytes of a server's stderr kept for error messages. */
const STDERR_TAIL = 2048;

export interface UpstreamPoolOptions {
  logger: Logger;
  /** The workspace: a stdio server's `cwd` is relative to it (and must stay in it, symlinks resolved). */
  workspace: string;
  /** The server's environment (allow-listed names only are passed on, as to commands). */
  env: Readonly<Record<string, string | undefined>>;
  /** The policy's passEnv names, read when a server starts. */
  passEnv?: () => Promise<readonly string[]>;
  /** Told when a connected server sends notifications/tools/list_changed. */
  onListChanged?: (server: string) => void;
  /** Makes the command line a stdio server starts with: in the sandbox (upstream-sandbox.ts), or as given. */
  launch: UpstreamLauncher;
  /** Checks a Streamable HTTP server's address and pins its connection to it (upstream-http.ts). */
  connect: UpstreamConnector;
  /** The OAuth provider of an HTTP server's connection (its sign-in, tools/mcp/oauth/). */
  authProvider?: (server: string, entry: McpServerEntry) => OAuthClientProvider | undefined;
  /** Sets up a new client before it connects (the handlers of upstream requests: upstream-requests.ts). */
  prepare?: (server: string, client: Client) => void;
}

/** A stdio server to start: its entry (and the entry's revision), argv, environment and working directory. */
export interface LaunchRequest {
  server: string;
  entry: StdioEntry;
  entryRev: number;
  command: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** The mark its processes carry (BYTESEEK_CALL): unique among running upstreams. */
  mark: string;
}

/** What to spawn for a stdio server, and what to undo once its processes are gone. */
export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  release(): Promise<void>;
  /** The memory cap the kernel killed a process of it at (its sandbox's memory cgroup, all commands', the machine's). */
  outOfMemory?(): Promise<OutOfMemory | undefined>;
}

/** Throws a ToolError (`sandbox_unavailable`, `mcp_unavailable`) when the server may not start. */
export type UpstreamLauncher = (request: LaunchRequest) => Promise<Launch>;

/** Starts the command as given, with the server's rights: only where the policy says `sandbox: "off"`. */
export const unsandboxedLaunch: UpstreamLauncher = async (request) => {
  const [command, ...args] = request.command as [string, ...string[]];
  return { command, args, env: request.env, cwd: request.cwd, release: async () => {} };
};

interface Live {
  server: string;
  entry: McpServerEntry;
  /** The registry entry's modRev the connection was made for: another means restart. */
  entryRev: number;
  state: UpstreamState;
  client?: Client;
  connecting?: Promise<Client>;
  pid?: number;
  mark?: string;
  /** Undoes what the launch made beside the process (its sandbox's cgroup, egress proxy). */
  release?: () => Promise<void>;
  /** Whether the kernel killed it at a memory cap (answered after release too). */
  outOfMemory?: () => Promise<OutOfMemory | undefined>;
  /** After an unasked exit: its processes ended, its sandbox removed, its cause read. */
  crashed?: Promise<string | undefined>;
  error?: string;
  crashes: number;
  retryAt?: number;
  startedAt?: number;
  inflight: number;
  idle?: NodeJS.Timeout;
  stderr: string;
  /** A stdio server exited on the era probe: it is started (and restarted) on 2025 without one. */
  diedOfProbe?: boolean;
  /**
   * Set once byteseek stops this upstream (not a crash). Final: a stopped Live is removed from the
   * pool and never started again; the next use makes a new one.
   */
  stopping?: boolean;
}

export interface UpstreamPool {
  /**
   * The connected client of `server`, started on first use (or after its entry changed), reused
   * after; after a crash, started again once its backoff is over (waiting for it when the call has
   * the time). Hold it with `use` for the duration of a call so it is not stopped as idle.
   */
  client(
    server: string,
    entry: McpServerEntry,
    entryRev: number,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Client>;
  /** Marks a call in progress (`release` when it ends): the idle timer starts when none is. */
  use(server: string): () => void;
  stop(server: string): Promise<void>;
  status(server: string): UpstreamStatus;
  /**
   * Why a server that exited unasked died, once what it left is cleaned up: the kill at its memory
   * cap; undefined when nothing more than its exit is known.
   */
  crashCause(server: string): Promise<string | undefined>;
  statuses(): UpstreamStatus[];
  /** Stops every server and ends every process they started. */
  close(): Promise<void>;
}

export function createUpstreamPool(options: UpstreamPoolOptions): UpstreamPool {
  const { logger } = options;
  const live = new Map<string, Live>();
  /** Stops under way (of connections already replaced or removed): close() waits for them. */
  const stopping = new Map<string, Promise<void>>();
  /**
   * The entry revision of each stdio server found to be a 2025 one the costly way (it exited on the
   * probe, or was silent on it until probeTimeoutMs): its next starts (after an idle stop, a crash)
   * send no probe, until its entry changes.
   */
  const probedLegacy = new Map<string, number>();
  let closed = false;

  function entryOf(server: string): Live | undefined {
    return live.get(server);
  }

  /**
   * The marks of stdio upstreams whose processes may still run: added before a process starts,
   * dropped once every process carrying it is known gone; close() ends whatever is left.
   */
  const marks = new Set<string>();

  /** Ends every process carrying `mark`; forgets the mark once none is left. */
  async function endMark(mark: string | undefined): Promise<void> {
    if (mark === undefined) return;
    const { left } = await endMarkedProcesses(undefined, mark).catch(() => ({ left: 1 }));
    if (left === 0) marks.delete(mark);
  }

  /** Ends the processes of `up`'s last start, then undoes what its launch made. */
  async function endStart(up: Live): Promise<void> {
    const release = up.release;
    up.release = undefined;
    await endMark(up.mark);
    await release?.().catch((err: unknown) =>
      logger.warn({ err, server: up.server }, "MCP sandbox cleanup failed"),
    );
  }

  /** A Live stopped (or the pool closed) since `start` began: what it started must not run on. */
  function abandoned(up: Live): boolean {
    return closed || up.stopping === true || live.get(up.server) !== up;
  }

  function stoppedWhileStarting(server: string): ToolError {
    return new ToolError(
      "mcp_unavailable",
      closed
        ? `byteseek is stopping: the MCP server "${server}" is not started`
        : `the MCP server "${server}" was stopped while it started; call it again to start it anew`,
      { details: { server } },
    );
  }

  async function client(
    server: string,
    entry: McpServerEntry,
    entryRev: number,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Client> {
    // Every wait (a stop, a backoff) lets other calls, a stop or close() run: look again after it,
    // so a start never begins for a Live that was stopped meanwhile or beside one another call began.
    for (;;) {
      if (closed)
        throw new ToolError(
          "mcp_unavailable",
          `byteseek is stopping: the MCP server "${server}" is not started`,
        );
      let up = live.get(server);
      if (up && (up.entryRev !== entryRev || up.stopping)) {
        await stop(server);
        continue;
      }
      if (!up) {
        up = { server, entry, entryRev, state: "stopped", crashes: 0, inflight: 0, stderr: "" };
        if (probedLegacy.get(server) === entryRev) up.diedOfProbe = true;
        live.set(server, up);
      }
      if (up.client && up.state === "running") return up.client;
      if (up.connecting) return up.connecting;
      if (up.state === "backoff" && up.retryAt !== undefined) {
        const wait = up.retryAt - Date.now();
        if (wait > 0) {
          if (wait >= timeoutMs)
            throw new ToolError(
              "mcp_unavailable",
              `the MCP server "${server}" crashed (${up.error ?? "it exited"}) and is restarted in ${wait} ms; try again then`,
            );
          await delay(wait, signal);
          continue;
        }
      }
      const target = up;
      target.connecting = start(target, timeoutMs, signal).finally(() => {
        target.connecting = undefined;
      });
      return target.connecting;
    }
  }

  async function start(up: Live, timeoutMs: number, signal?: AbortSignal): Promise<Client> {
    up.state = "starting";
    up.stderr = "";
    const { entry, server } = up;
    const c = new Client(
      { name: "byteseek", version: "0.1.0" },
      {
        listChanged: {
          tools: {
            autoRefresh: false,
            debounceMs: 50,
            onChanged: () => options.onListChanged?.(server),
          },
        },
        // a server speaking 2026-07-28 gets it (server/discover first, on its own pipe or URL), any
        // other the 2025 handshake; a stdio server that died of the probe is started again on 2025
        ...(up.diedOfProbe ? {} : eraNegotiation(entry, timeoutMs)),
      },
    );
    options.prepare?.(server, c);
    let transport: SamePipeStdioTransport | StreamableHTTPClientTransport;
    const failed = (err: unknown): never => {
      up.state = "failed";
      up.error = (err as Error).message;
      throw err;
    };
    if (isStdio(entry)) {
      const cwd = await workingDir(entry.cwd, options.workspace, server).catch(failed);
      const passEnv = (await options.passEnv?.().catch(() => undefined)) ?? [];
      if (abandoned(up)) throw stoppedWhileStarting(server);
      // known before the process exists, so nothing it starts can escape a stop
      const mark = randomBytes(12).toString("hex");
      up.mark = mark;
      marks.add(mark);
      // the shell impl's environment: the allow-list, the entry's own variables, and a mark that
      // lets byteseek end every process the server starts, even those that leave its group
      const env = buildCommandEnv({
        source: options.env,
        passEnv,
        ...(entry.env ? { declared: entry.env } : {}),
        mark,
      });
      const launched = await options
        .launch({ server, entry, entryRev: up.entryRev, command: entry.command, env, cwd, mark })
        .catch((err: unknown) => {
          marks.delete(mark);
          return failed(err);
        });
      up.release = launched.release;
      up.outOfMemory = launched.outOfMemory;
      if (abandoned(up)) {
        await endStart(up);
        throw stoppedWhileStarting(server);
      }
      const stdio = new SamePipeStdioTransport({
        command: launched.command,
        args: launched.args,
        cwd: launched.cwd,
        env: launched.env,
        stderr: "pipe",
      });
      stdio.stderr?.on("data", (chunk: Buffer) => {
        up.stderr = (up.stderr + chunk.toString("utf8")).slice(-STDERR_TAIL);
      });
      transport = stdio;
    } else {
      // every request goes to the address the host rules checked (no second lookup)
      const pinned = await options.connect({ server, entry, entryRev: up.entryRev }).catch(failed);
      up.release = pinned.close;
      if (abandoned(up)) {
        await endStart(up);
        throw stoppedWhileStarting(server);
      }
      const authProvider = options.authProvider?.(server, entry);
      transport = new StreamableHTTPClientTransport(new URL(entry.url), {
        requestInit: { headers: entry.headers ?? {} },
        fetch: pinned.fetch,
        ...(authProvider ? { authProvider } : {}),
      });
    }
    // a process that exits before answering closes the transport: the handshake fails at once. An
    // HTTP transport closes too when its first request fails, before the request's own error (the
    // status, a refused connection) reaches connect: that error is the one to tell.
    const exited = new Promise<never>((_, reject) => {
      if (transport instanceof SamePipeStdioTransport)
        transport.onclose = () => reject(new Error("it exited before answering"));
    });
    exited.catch(() => {});
    /** The stdio process, to be ended if this start gives up on it. */
    const started = () =>
      transport instanceof SamePipeStdioTransport ? (transport.pid ?? undefined) : undefined;
    const began = Date.now();
    try {
      await Promise.race([
        c.connect(transport, { timeout: timeoutMs, ...(signal ? { signal } : {}) }),
        exited,
      ]);
    } catch (err) {
      const signIn = "oauth" in entry && entry.oauth !== undefined ? signInFailure(server, err) : undefined;
      const why = signIn?.message ?? startFailure(server, entry, err, up.stderr);
      await closeWithin(c, started());
      await endStart(up);
      if (abandoned(up)) throw stoppedWhileStarting(server);
      if (transport instanceof SamePipeStdioTransport && transport.probeLast && !up.diedOfProbe) {
        // it exited on server/discover (some servers end on any request before initialize)
        logger.info({ server }, "MCP server exited on the 2026-07-28 probe: starting it again on 2025");
        up.diedOfProbe = true;
        probedLegacy.set(server, up.entryRev);
        return start(up, timeoutMs, signal);
      }
      up.state = "failed";
      up.error = why;
      up.pid = undefined;
      throw new ToolError("mcp_unavailable", why, { details: { server } });
    }
    if (abandoned(up)) {
      // stopped (or closed) during the handshake: this start ends what it began
      await closeWithin(c, started());
      await endStart(up);
      throw stoppedWhileStarting(server);
    }
    if (transport instanceof SamePipeStdioTransport && transport.pid !== null) up.pid = transport.pid;
    // on 2025 after the probe's whole time: it was silent on it (an answer, -32601, comes sooner)
    const probe = eraNegotiation(entry, timeoutMs).versionNegotiation?.probe?.timeoutMs;
    if (!up.diedOfProbe && probe !== undefined && isStdio(entry) && c.getProtocolEra() === "legacy") {
      if (Date.now() - began >= probe) probedLegacy.set(server, up.entryRev);
    }
    up.client = c;
    up.state = "running";
    up.error = undefined;
    up.crashed = undefined;
    up.startedAt = Date.now();
    c.onclose = () => onClosed(up, c);
    logger.info({ server, pid: up.pid }, "MCP server started");
    armIdle(up);
    return c;
  }

  /**
   * How the era is asked: by the probe, which a stdio server answers within its probeTimeoutMs or
   * is spoken to in 2025 (silence on a local pipe is a 2025 server); over HTTP within the start's
   * timeout (silence there is an outage, which fails the start). probeTimeoutMs 0: 2025 at once.
   */
  function eraNegotiation(
    entry: McpServerEntry,
    timeoutMs: number,
  ): Pick<ClientOptions, "versionNegotiation"> {
    if (!isStdio(entry)) return { versionNegotiation: { mode: "auto" } };
    const probe = entry.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
    if (probe === 0) return {};
    return { versionNegotiation: { mode: "auto", probe: { timeoutMs: Math.min(probe, timeoutMs) } } };
  }

  function onClosed(up: Live, c: Client): void {
    if (up.client !== c) return;
    up.client = undefined;
    const pid = up.pid;
    up.pid = undefined;
    if (up.stopping || closed) {
      up.state = "stopped";
      return;
    }
    // unasked: a crash. Restart on next use, after a backoff that grows with repeated crashes.
    if (up.startedAt !== undefined && Date.now() - up.startedAt > STABLE_MS) up.crashes = 0;
    up.crashes++;
    const wait = Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** (up.crashes - 1));
    up.retryAt = Date.now() + wait;
    up.state = "backoff";
    const tail = up.stderr.trim().split("\n").slice(-3).join(" | ");
    up.error = `it exited unexpectedly${tail ? ` (stderr: ${tail})` : ""}`;
    logger.warn(
      { server: up.server, pid, crashes: up.crashes, retryInMs: wait },
      "MCP server exited unexpectedly",
    );
    const outOfMemory = up.outOfMemory;
    up.outOfMemory = undefined;
    up.crashed = endStart(up).then(async function toldOutOfMemory() {
      const cap = await outOfMemory?.().catch(() => undefined);
      if (cap === undefined) return undefined;
      const cause = `it was ${outOfMemoryMessage(cap)}`;
      // what the next call's "crashed (…)" and the server's status say, instead of a bare exit
      if (up.state === "backoff") up.error = cause;
      logger.warn({ server: up.server, ...outOfMemoryDetails(cap) }, "MCP server killed for want of memory");
      return cause;
    });
  }

  function armIdle(up: Live): void {
    if (up.idle) clearTimeout(up.idle);
    up.idle = undefined;
    const ms = up.entry.idleStopMs ?? DEFAULT_IDLE_STOP_MS;
    if (ms === 0 || up.inflight > 0 || up.state !== "running") return;
    up.idle = setTimeout(() => {
      if (up.inflight === 0 && live.get(up.server) === up) void stop(up.server);
    }, ms);
    up.idle.unref();
  }

  function use(server: string): () => void {
    const up = live.get(server);
    if (!up) return () => {};
    up.inflight++;
    if (up.idle) clearTimeout(up.idle);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      up.inflight--;
      armIdle(up);
    };
  }

  async function stop(server: string): Promise<void> {
    const up = live.get(server);
    if (!up) return stopping.get(server);
    if (up.idle) clearTimeout(up.idle);
    up.stopping = true;
    up.state = "stopping";
    const done = (async () => {
      const c = up.client ?? (await up.connecting?.catch(() => undefined));
      const pid = up.pid;
      up.client = undefined;
      if (c) await closeWithin(c, pid);
      await endStart(up);
      up.state = "stopped";
      up.pid = undefined;
      logger.info({ server }, "MCP server stopped");
    })().finally(() => {
      if (live.get(server) === up) live.delete(server);
      if (stopping.get(server) === done) stopping.delete(server);
    });
    stopping.set(server, done);
    return done;
  }

  async function crashCause(server: string): Promise<string | undefined> {
    return (await entryOf(server)?.crashed?.catch(() => undefined)) ?? undefined;
  }

  function status(server: string): UpstreamStatus {
    const up = entryOf(server);
    if (!up) return { server, state: "stopped", crashes: 0 };
    return {
      server,
      state: up.state,
      crashes: up.crashes,
      ...(up.pid !== undefined ? { pid: up.pid } : {}),
      ...(up.error !== undefined ? { error: up.error } : {}),
      ...(up.retryAt !== undefined && up.state === "backoff" ? { retryAt: up.retryAt } : {}),
      ...(up.client?.getNegotiatedProtocolVersion()
        ? { protocol: up.client.getNegotiatedProtocolVersion() }
        : {}),
    };
  }

  return {
    client,
    use,
    stop,
    status,
    crashCause,
    statuses: () => [...live.keys()].map(status),
    async close() {
      closed = true;
      await Promise.all([...live.keys()].map(stop));
      await Promise.all(stopping.values());
      // marks whose processes were not yet seen gone (a kill still settling): none outlives close
      await Promise.all([...marks].map(endMark));
    },
  };
}

/** The working directory of a stdio server: relative to the workspace, and inside it once symlinks are resolved. */
async function workingDir(cwd: string | undefined, given: string, server: string): Promise<string> {
  const workspace = await realpath(given).catch(() => path.resolve(given));
  const wanted = path.resolve(workspace, cwd ?? ".");
  let real: string;
  try {
    real = await realpath(wanted);
  } catch {
    throw new ToolError(
      "mcp_unavailable",
      `the MCP server "${server}": its cwd ${wanted} does not exist; fix /byteseek/mcp/${server}`,
    );
  }
  const root = workspace.endsWith(path.sep) ? workspace : workspace + path.sep;
  if (real !== workspace && !real.startsWith(root))
    throw new ToolError(
      "mcp_unavailable",
      `the MCP server "${server}": its cwd ${wanted} is outside the workspace ${workspace}; fix /byteseek/mcp/${server}`,
    );
  return real;
}

function startFailure(server: string, entry: McpServerEntry, err: unknown, stderr: string): string {
  const what = isStdio(entry) ? JSON.stringify(entry.command) : entry.url;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  let why = err instanceof Error ? err.message : String(err);
  // unsandboxed, spawn fails; sandboxed, the sandbox's exec does (and says so on stderr)
  if (
    isStdio(entry) &&
    (code === "ENOENT" || /(?:failed to execute|execvp) .*: No such file or directory/.test(stderr))
  )
    why = `no such program "${entry.command[0]}"${code === "ENOENT" ? "" : " in its sandbox (the system folders, the workspace and its readOnlyPaths)"}`;
  if (!isStdio(entry)) why = httpCause(err, new URL(entry.url)) ?? why;
  const tail = stderr.trim().split("\n").slice(-5).join("\n  ");
  return `the MCP server "${server}" (${what}) could not start: ${why}${tail ? `\n  its stderr: ${tail}` : ""}\nFix /byteseek/mcp/${server} (kvspace get /byteseek/mcp/${server}), then kvspace mcp sync ${server}`;
}

/** What a failed connection to a Streamable HTTP server had to say, when it is known. */
const NET_CAUSES: Record<string, string> = {
  ECONNREFUSED: "connection refused: nothing listens there",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved now",
  ETIMEDOUT: "the connection timed out",
  ECONNRESET: "the connection was reset",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
};

/**
 * The real cause of a failed start over HTTP: the status the server answered (401 and 403 say
 * which credential to set, 404 that nothing serves MCP at that path), or the network error under
 * a `fetch failed` (refused, unresolvable, timed out). Undefined: the error's own message is best.
 */
function httpCause(err: unknown, url: URL): string | undefined {
  const data = (err as { data?: { status?: unknown; statusText?: unknown; text?: unknown } } | undefined)
    ?.data;
  if (typeof data?.status === "number") {
    const text = typeof data.text === "string" ? data.text.trim().replace(/\s+/g, " ").slice(0, 200) : "";
    const said = `HTTP ${data.status}${typeof data.statusText === "string" && data.statusText ? ` ${data.statusText}` : ""}${text ? ` (${text})` : ""}`;
    if (data.status === 401 || data.status === 403)
      return `${said}: the server wants a credential it accepts; put it in the entry's "headers" (e.g. "Authorization": "Bearer …")`;
    if (data.status === 404) return `${said}: nothing serves MCP at ${url.pathname}; check the URL's path`;
    return said;
  }
  for (let cause: unknown = err, depth = 0; cause && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && NET_CAUSES[code]) return `${NET_CAUSES[code]} (${code}, ${url.host})`;
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Closes a connection; a stdio server's process (`pid`) still there STOP_GRACE_MS after its stdin
 * closed is sent SIGTERM, as the SDK's close would send it later (then SIGKILL, as it does).
 */
async function closeWithin(c: Client, pid: number | undefined): Promise<void> {
  const term =
    pid === undefined
      ? undefined
      : setTimeout(() => {
          try {
            process.kill(pid, "SIGTERM");
          } catch {
            // gone already
          }
        }, STOP_GRACE_MS);
  try {
    await closeQuietly(c);
  } finally {
    clearTimeout(term);
  }
}

async function closeQuietly(c: Client): Promise<void> {
  try {
    await c.close();
  } catch {
    // already closed
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(t);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
