/**
 * `createHttpTree({url, token})`: the `Tree` interface over a byteseek server's HTTP routes (a third
 * engine beside LevelDB and etcd, proven by the same conformance suite), so `kvspace` and
 * `byteseek` work the same with `KVSPACE=http://…`. Requests go through one keep-alive transport
 * (transport.ts: node:http, or an undici pool on the reference lane); an error answer comes back as the TreeError the server's tree raised (same code,
 * message and details); a server that cannot be reached is TREE_UNAVAILABLE, one that takes the
 * connection and then says nothing for `timeoutMs` is TREE_TIMEOUT (silence.ts). `watch` follows the
 * SSE stream and, when the connection drops (a restart) or goes silent past the server's heartbeat,
 * reconnects with `Last-Event-ID`.
 *
 * Over 400 lines: one implementation of the whole `Tree` interface, a method per route; the wire conversions (convert.ts) and the SSE reader (shared/sse.ts) are already apart.
 */

import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { readSse } from "../../shared/sse.js";
import { TreeError } from "../errors.js";
import { fastLanesByDefault, readFastLanes } from "../fast-lanes.js";
import type { GrepOptions, GrepResult } from "../grep.js";
import { parseDirKey, parseKey, parseValueKey } from "../path.js";
import type {
  DelOptions,
  ExportEntry,
  HistoryEntry,
  ImportResult,
  ListOptions,
  ListResult,
  SetOptions,
  Tree,
  TxnRequest,
  TxnResult,
  WatchBatch,
  WatchOptions,
} from "../types.js";
import { checkValue, type TreeValue } from "../value.js";
import {
  batchFromJson,
  errorFromJson,
  historyFromJson,
  listFromJson,
  nodeFromJson,
  txnResultFromJson,
  txnToJson,
  typedValueToJson,
} from "./convert.js";
import type {
  DeleteJson,
  HealthJson,
  HistoryListJson,
  ImportResultJson,
  ListJson,
  NodeJson,
  TxnResultJson,
  WatchBatchJson,
  WatchProgressJson,
  WriteJson,
} from "./schemas.js";
import {
  boundSilence,
  CLIENT_TIMEOUT_SETTING,
  DEFAULT_CLIENT_TIMEOUT_MS,
  readClientTimeout,
  type SilenceBound,
} from "./silence.js";
import { bodyText, createTransport, type TransportAnswer, type TransportKind } from "./transport.js";

/**
 * The header a watch's stream carries: the server's interval between progress events (its
 * heartbeat), ms. A stream silent for longer than that plus the client's timeout has stalled.
 */
export const PROGRESS_INTERVAL_HEADER = "x-byteseek-progress-ms";

/** The heartbeat a server that names none sends (server/app.ts's default). */
const DEFAULT_PROGRESS_MS = 15_000;

/** What a watch tells its reader about its server (HttpTreeOptions.onWatchLost / onWatchBack). */
export interface WatchLost {
  /** Who went away: `the byteseek server at <url>`, or the process that held the store. */
  server: string;
  /** Why the last try failed, in a few words. */
  reason: string;
  /** How long the watch keeps trying before it ends (watchPatienceMs); undefined: until stopped. */
  patienceMs: number | undefined;
}

export interface HttpTreeOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:7411`. */
  url: string | URL;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Most connections kept open to the server (default 16). */
  connections?: number;
  /** Longest pause between watch reconnection attempts, ms (default 2000). */
  maxReconnectDelayMs?: number;
  /**
   * How long the server may stay silent, ms (default 30 000; 0: no bound): a request waits this
   * long for its answer to begin and between the pieces of its answer (or of a body it sends), then
   * fails with TREE_TIMEOUT. A watch waits this long for its stream to open, then, once open, for
   * the server's heartbeat (its progress events) this long past their interval before it drops the
   * connection and connects again. `openHttpTree` reads it from BYTESEEK_CLIENT_TIMEOUT.
   */
  timeoutMs?: number;
  /**
   * How long a watch keeps trying to reach a server it lost before it ends with TREE_UNAVAILABLE
   * (its details' `resumeFrom`: the revision to watch from to miss nothing), ms. Default: no
   * bound, as a server at a URL may be restarted; a held folder's holder that stopped is given a
   * bounded time to come back (cli/open-store.ts).
   */
  watchPatienceMs?: number;
  /** Told once when a watch loses its server and starts trying again (a person may want to know). */
  onWatchLost?: (lost: WatchLost) => void;
  /** Told when a watch that lost its server reaches it again. */
  onWatchBack?: (back: { server: string }) => void;
  /**
   * A Unix socket to connect to instead of the URL's host and port (the URL still gives the Host
   * header and the path): the socket of the process that holds a store folder (mcp/share.ts).
   */
  socketPath?: string;
  /**
   * What sends the requests: `node` (node:http, the fast lane) or `undici` (the reference lane);
   * default: the fast lane unless BYTESEEK_FAST=0 (tree/fast-lanes.ts).
   */
  transport?: TransportKind;
}

const encodeKey = (key: string): string => key.split("/").map(encodeURIComponent).join("/");

/** `ms` in seconds, as messages say it (0.3, 30). */
const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/** The pieces of an answer's body, each a sign of life to `bound`. */
async function* touching<T>(source: AsyncIterable<T>, bound: SilenceBound): AsyncGenerator<T> {
  for await (const piece of source) {
    bound.touch();
    yield piece;
  }
}

/**
 * The pieces of a body being sent: the time its source takes to give the next is not the server's
 * silence (a slow `producer | kvspace import`); the time the transport takes to take one is.
 */
async function* sending<T>(source: AsyncIterable<T>, bound: SilenceBound): AsyncGenerator<T> {
  bound.pause();
  for await (const piece of source) {
    bound.touch();
    yield piece;
    bound.pause();
  }
  bound.touch();
}

/** The heartbeat interval a watch's stream names (PROGRESS_INTERVAL_HEADER), or the default's. */
function progressInterval(headers: Record<string, string | string[] | undefined>): number {
  const raw = headers[PROGRESS_INTERVAL_HEADER];
  const ms = Number(Array.isArray(raw) ? raw[0] : raw);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : DEFAULT_PROGRESS_MS;
}

/** Why a try to reach a server failed, in a few words (a timeout's whole advice is for a request's error). */
function reasonOf(err: unknown): string {
  if (err instanceof TreeError && err.code === "TREE_TIMEOUT")
    return `no answer within ${seconds(Number(err.details.timeoutMs))} s`;
  return err instanceof Error ? err.message : String(err);
}

const httpTrees = new WeakSet<Tree>();

/**
 * Whether `tree` is answered by a byteseek process (over TCP, or a held folder's socket): that
 * process seeded its store, and checks what it is sent.
 */
export function isHttpTree(tree: Tree): boolean {
  return httpTrees.has(tree);
}

/** A Tree answered by a byteseek server. */
export interface HttpTree extends Tree {
  /**
   * Asks the server for its revision and oldest resumable revision (`revision()` and
   * `compactedRev()` are synchronous, so they answer what the last answer said); also proves the
   * server answers and takes the token.
   */
  refresh(): Promise<void>;
  /** Searches below `prefix` on the server (`GET /v1/grep`): one page, as tree/grep.ts answers it. */
  grep(prefix: string, options: GrepOptions): Promise<GrepResult>;
}

export function createHttpTree(options: HttpTreeOptions): HttpTree {
  const base = new URL(options.url);
  const prefix = base.pathname.replace(/\/+$/, "");
  const pool = createTransport(options.transport ?? (fastLanesByDefault() ? "node" : "undici"), base.origin, {
    connections: options.connections ?? 16,
    ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath }),
  });
  const where = options.socketPath === undefined ? base.href : `${base.href} (through ${options.socketPath})`;
  const maxDelay = options.maxReconnectDelayMs ?? 2000;
  const timeoutMs = options.timeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS;
  const server =
    options.socketPath === undefined
      ? `the byteseek server at ${base.href}`
      : `the byteseek process that holds the store (its socket ${options.socketPath})`;
  const auth: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const watches = new Set<AbortController>();
  let lastRev = 0;
  let compacted = 1;
  let closed = false;

  function noteRevision(headers: Record<string, string | string[] | undefined>): void {
    const raw = headers["x-byteseek-revision"];
    const rev = Number(Array.isArray(raw) ? raw[0] : raw);
    if (Number.isSafeInteger(rev) && rev > lastRev) lastRev = rev;
    const c = Number(headers["x-byteseek-compacted-revision"]);
    if (Number.isSafeInteger(c) && c > compacted) compacted = c;
  }

  /** A watch's end when its server stayed away `patienceMs`; `resumeFrom` is where to watch from again. */
  function lostServer(patienceMs: number, resumeFrom: number | undefined, err: unknown): TreeError {
    const s = seconds(patienceMs);
    const what =
      options.socketPath === undefined
        ? `the byteseek server at ${base.href} went away`
        : `the byteseek process that held the store stopped (its socket ${options.socketPath})`;
    return new TreeError(
      "TREE_UNAVAILABLE",
      `${what}, and nothing answered there for ${s} s`,
      {
        url: base.href,
        ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath }),
        ...(resumeFrom === undefined ? {} : { resumeFrom }),
      },
      err,
    );
  }

  /** A request the server took and did not answer within `timeoutMs`: what to check, what to change. */
  function timedOut(method: string, path: string, err: unknown): TreeError {
    const change =
      method === "GET"
        ? ""
        : "; the change may or may not have been made: read it back before making it again";
    return new TreeError(
      "TREE_TIMEOUT",
      `${server} did not answer ${method} ${path.split("?")[0]} within ${seconds(timeoutMs)} s: ` +
        `check that it is running and not stuck (its log says what it is doing), or give it longer with ${CLIENT_TIMEOUT_SETTING}=<ms> (now ${timeoutMs})${change}`,
      { url: base.href, timeoutMs, setting: CLIENT_TIMEOUT_SETTING },
      err,
    );
  }

  function unreachable(err: unknown): TreeError {
    return new TreeError(
      "TREE_UNAVAILABLE",
      `cannot reach the byteseek server at ${where}: ${(err as Error).message}`,
      { url: base.href },
      err,
    );
  }

  interface Call {
    method: "GET" | "PUT" | "POST" | "DELETE";
    path: string;
    query?: Record<string, string | number | boolean | undefined>;
    headers?: Record<string, string>;
    json?: unknown;
    body?: AsyncIterable<string>;
    contentType?: string;
  }

  function pathOf(call: Call): string {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query ?? {})) {
      if (v === undefined || v === false) continue;
      params.set(k, v === true ? "1" : String(v));
    }
    const qs = params.toString();
    return prefix + call.path + (qs ? `?${qs}` : "");
  }

  /** One request; answers the status and the parsed JSON body of a 2xx, throws the TreeError otherwise. */
  async function send<T>(call: Call, accept404 = false): Promise<{ status: number; body: T | undefined }> {
    if (closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
    const headers: Record<string, string> = { ...auth, ...call.headers };
    const bound = boundSilence(timeoutMs);
    let body: string | Readable | undefined;
    if (call.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(call.json);
    } else if (call.body !== undefined) {
      headers["content-type"] = call.contentType ?? "application/x-ndjson";
      body = Readable.from(sending(call.body, bound));
    }
    const path = pathOf(call);
    let res: TransportAnswer;
    let text: string;
    try {
      try {
        res = await pool.request({
          method: call.method,
          path,
          headers,
          body: body ?? null,
          signal: bound.signal,
        });
      } catch (err) {
        if (bound.expired()) throw timedOut(call.method, path, err);
        if (err instanceof TreeError) throw err;
        throw unreachable(err);
      }
      bound.touch();
      noteRevision(res.headers);
      try {
        text = await bodyText(res.body, bound.touch);
      } catch (err) {
        if (bound.expired()) throw timedOut(call.method, path, err);
        throw unreachable(err);
      }
    } finally {
      bound.stop();
    }
    if (res.statusCode >= 200 && res.statusCode < 300)
      return { status: res.statusCode, body: text === "" ? undefined : (JSON.parse(text) as T) };
    if (accept404 && res.statusCode === 404) return { status: 404, body: undefined };
    throw errorFromJson(res.statusCode, text);
  }

  // Keys are checked here first, so a bad one fails exactly as on the embedded tree.
  const treePath = (key: string) => `/v1/tree${encodeKey(parseKey(key).key)}`;
  const condition = (ifVersion: number | undefined): Record<string, string> =>
    ifVersion === undefined ? {} : { "if-match": `"${ifVersion}"` };

  async function* watch(prefixKey: string, o: WatchOptions = {}): AsyncGenerator<WatchBatch> {
    const path = `${prefix}/v1/watch${encodeKey(parseKey(prefixKey).key)}`;
    if (closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
    const ac = new AbortController();
    const stop = () => ac.abort();
    o.signal?.addEventListener("abort", stop, { once: true });
    if (o.signal?.aborted) ac.abort();
    watches.add(ac);
    // The resume point: after the last change seen, or (before any) the revision the watch started at.
    let cursor: number | undefined = o.fromRev === undefined ? undefined : o.fromRev - 1;
    let delay = 50;
    // Since when nothing answers (the connection dropped, was refused, or said nothing); undefined while one does.
    let lostAt: number | undefined;
    const pause = async (atMost = maxDelay) => {
      await sleep(Math.min(delay, atMost), undefined, { signal: ac.signal }).catch(() => {});
      delay = Math.min(delay * 2, maxDelay);
    };
    const retryLater = async (err: unknown) => {
      const patience = options.watchPatienceMs;
      if (lostAt === undefined) {
        lostAt = performance.now();
        options.onWatchLost?.({ server, reason: reasonOf(err), patienceMs: patience });
      }
      if (patience === undefined) return pause();
      const left = patience - (performance.now() - lostAt);
      if (left <= 0) throw lostServer(patience, cursor === undefined ? o.fromRev : cursor + 1, err);
      // the last try comes as the patience ends, not up to a whole pause after
      await pause(left);
    };
    const answered = () => {
      if (lostAt === undefined) return;
      lostAt = undefined;
      options.onWatchBack?.({ server });
    };
    try {
      while (!ac.signal.aborted) {
        const headers: Record<string, string> = { ...auth, accept: "text/event-stream" };
        if (cursor !== undefined) headers["last-event-id"] = String(cursor);
        // Each connection has its own bound: a silent one is dropped, and the watch goes on.
        const bound = boundSilence(timeoutMs, ac.signal);
        try {
          let res: TransportAnswer;
          try {
            res = await pool.request({ method: "GET", path, headers, signal: bound.signal });
            bound.touch();
          } catch (err) {
            if (ac.signal.aborted) return;
            if (closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
            // the server is away (restarting?) or stuck: try again, a little later each time
            await retryLater(bound.expired() ? timedOut("GET", path, err) : err);
            continue;
          }
          noteRevision(res.headers);
          if (res.statusCode !== 200) {
            let text: string;
            try {
              text = await bodyText(res.body, bound.touch);
            } catch (err) {
              if (ac.signal.aborted) return;
              await retryLater(bound.expired() ? timedOut("GET", path, err) : err);
              continue;
            }
            if (res.statusCode >= 500) {
              // it answers (closing, or at its limit of watches): it is not lost
              answered();
              await pause();
              continue;
            }
            throw errorFromJson(res.statusCode, text);
          }
          delay = 50;
          answered();
          // Open: the server sends a progress event every interval, so a stream silent for that
          // long plus the timeout is stalled (a half-open connection, a stuck server).
          if (timeoutMs > 0) bound.limit(progressInterval(res.headers) + timeoutMs);
          try {
            for await (const ev of readSse(touching(res.body, bound))) {
              if (ev.event === "change") {
                const batch = JSON.parse(ev.data) as WatchBatchJson;
                if (cursor !== undefined && batch.rev <= cursor) continue;
                cursor = batch.rev;
                if (batch.rev > lastRev) lastRev = batch.rev;
                // the reader's time is not the server's silence
                bound.pause();
                yield batchFromJson(batch);
                bound.touch();
              } else if (ev.event === "progress") {
                const rev = Number((JSON.parse(ev.data) as WatchProgressJson).rev);
                if (cursor === undefined) cursor = rev;
                if (rev > lastRev) lastRev = rev;
              } else if (ev.event === "compacted" || ev.event === "error") {
                const status = ev.event === "compacted" ? 410 : 500;
                throw errorFromJson(status, `{"error":${ev.data}}`);
              }
            }
          } catch (err) {
            if (err instanceof TreeError) throw err;
            if (ac.signal.aborted) return;
            // The connection dropped, or went silent past the heartbeat: reconnect from the cursor.
          }
        } finally {
          bound.stop();
        }
      }
    } finally {
      o.signal?.removeEventListener("abort", stop);
      watches.delete(ac);
      ac.abort();
    }
  }

  const tree: HttpTree = {
    async get(key) {
      const { body } = await send<NodeJson>(
        { method: "GET", path: treePath(key), query: { node: key.endsWith("/") } },
        true,
      );
      return body === undefined ? undefined : nodeFromJson(body);
    },
    async set(key, value: TreeValue, o: SetOptions = {}) {
      parseValueKey(key);
      checkValue(value);
      const headers = { ...condition(o.ifVersion), ...(o.create ? { "if-none-match": "*" } : {}) };
      const json: Record<string, unknown> = typedValueToJson(value);
      if (o.ro !== undefined) json.ro = o.ro;
      if (o.vid !== undefined) json.vid = o.vid;
      const { body } = await send<WriteJson>({
        method: "PUT",
        path: treePath(key),
        query: { force: o.force, unchecked: o.unchecked },
        headers,
        json,
      });
      return body!;
    },
    async del(key, o: DelOptions = {}) {
      const { body } = await send<DeleteJson>({
        method: "DELETE",
        path: treePath(key),
        query: { force: o.force, empty: key.endsWith("/") },
        headers: condition(o.ifVersion),
      });
      const b = body!;
      return { key: b.key, rev: b.rev, version: b.version, deleted: b.deleted ?? true };
    },
    async deltree(dir, o = {}) {
      if (!dir.endsWith("/")) {
        // Same refusal as the tree gives (the server would delete the value instead).
        parseDirKey(dir);
      }
      const { body } = await send<DeleteJson>({
        method: "DELETE",
        path: treePath(dir),
        query: { force: o.force },
        headers: condition(o.ifVersion),
      });
      const b = body!;
      return { key: b.key, rev: b.rev, version: b.version, removed: b.removed ?? 0 };
    },
    async mkindex(dir) {
      parseDirKey(dir);
      return (await send<WriteJson>({ method: "PUT", path: treePath(dir) })).body!;
    },
    async list(dir, o: ListOptions = {}): Promise<ListResult> {
      parseDirKey(dir);
      if (o.limit !== undefined && (!Number.isInteger(o.limit) || o.limit < 1))
        throw new TreeError("TREE_INVALID_VALUE", `limit must be a positive integer, got ${o.limit}`);
      const { body } = await send<ListJson>({
        method: "GET",
        path: treePath(dir),
        query: {
          limit: o.limit === undefined ? undefined : Math.min(o.limit, 100_000),
          after: o.after,
          values: o.values === false ? "0" : undefined,
          system: o.system,
        },
      });
      const b = body!;
      // The server lists a value over 64 KiB as a preview (server/listing.ts): the tree's list gives
      // whole values, so those are read one by one (a key gone meanwhile keeps its preview's place).
      for (const w of b.children)
        if (w.value === undefined && w.kind !== "index" && o.values !== false && "preview" in w) {
          const whole = await send<NodeJson>({ method: "GET", path: treePath(w.key) }, true);
          if (whole.body !== undefined) Object.assign(w, whole.body);
        }
      return listFromJson(b);
    },
    async append(dir, value, o = {}) {
      parseDirKey(dir);
      checkValue(value);
      const json: Record<string, unknown> = typedValueToJson(value);
      if (o.ro !== undefined) json.ro = o.ro;
      if (o.vid !== undefined) json.vid = o.vid;
      return (await send<WriteJson>({ method: "POST", path: treePath(dir), json })).body!;
    },
    async txn(req: TxnRequest): Promise<TxnResult> {
      const { body } = await send<TxnResultJson>({ method: "POST", path: "/v1/txn", json: txnToJson(req) });
      return txnResultFromJson(body!);
    },
    watch,
    async history(key): Promise<HistoryEntry[]> {
      parseValueKey(key);
      const { body } = await send<HistoryListJson>(
        { method: "GET", path: treePath(key), query: { history: true } },
        true,
      );
      return body === undefined ? [] : body.history.map((h) => historyFromJson(key, h));
    },
    export: (dir = "/") => exportLines(dir),
    async import(entries, io = {}): Promise<ImportResult> {
      async function* lines(): AsyncGenerator<string> {
        for await (const e of entries) yield `${typeof e === "string" ? e : JSON.stringify(e)}\n`;
      }
      const query = { force: io.force, unchecked: io.unchecked };
      const { body } = await send<ImportResultJson>({
        method: "POST",
        path: "/v1/import",
        query,
        body: lines(),
      });
      return body!;
    },
    async clear() {
      const { body } = await send<DeleteJson>({
        method: "DELETE",
        path: "/v1/tree/",
        query: { force: "1" },
      });
      return { key: "/", rev: body!.rev, version: 0 };
    },
    refresh,
    grep,
    revision: () => lastRev,
    compactedRev: () => compacted,
    async close() {
      if (closed) return;
      closed = true;
      for (const ac of watches) ac.abort();
      await pool.close();
    },
  };

  async function* exportLines(dir: string): AsyncGenerator<ExportEntry> {
    if (closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
    // the person's own client: the secret fields come whole (kvspace export masks them unless --secrets)
    const path = `${prefix}/v1/export${encodeKey(parseDirKey(dir).key)}?secrets=1`;
    const bound = boundSilence(timeoutMs);
    try {
      let res: TransportAnswer;
      try {
        res = await pool.request({ method: "GET", path, headers: auth, signal: bound.signal });
      } catch (err) {
        throw bound.expired() ? timedOut("GET", path, err) : unreachable(err);
      }
      bound.touch();
      noteRevision(res.headers);
      if (res.statusCode !== 200) throw errorFromJson(res.statusCode, await bodyText(res.body, bound.touch));
      res.body.setEncoding("utf8");
      let rest = "";
      try {
        for await (const chunk of res.body) {
          bound.touch();
          rest += chunk as string;
          const lines = rest.split("\n");
          rest = lines.pop() ?? "";
          // the reader's time is not the server's silence
          bound.pause();
          for (const line of lines) if (line !== "") yield JSON.parse(line) as ExportEntry;
          bound.touch();
        }
      } catch (err) {
        if (bound.expired()) throw timedOut("GET", path, err);
        throw err;
      }
      if (rest !== "") yield JSON.parse(rest) as ExportEntry;
    } finally {
      bound.stop();
    }
  }

  async function grep(dir: string, o: GrepOptions): Promise<GrepResult> {
    const { body } = await send<GrepResult>({
      method: "GET",
      path: `/v1/grep${encodeKey(parseDirKey(dir).key)}`,
      query: {
        pattern: o.pattern,
        regex: o.regex,
        ignoreCase: o.ignoreCase,
        keys: o.keys === false ? "0" : undefined,
        values: o.values === false ? "0" : undefined,
        limit: o.limit,
        after: o.after,
      },
    });
    return body!;
  }

  async function refresh(): Promise<void> {
    const { body } = await send<HealthJson>({ method: "GET", path: "/healthz" });
    if (body) {
      lastRev = Math.max(lastRev, body.rev);
      compacted = body.compactedRev;
    }
  }
  httpTrees.add(tree);
  return tree;
}

/**
 * Opens a tree on a server and checks it answers (and the token is right) before the first real
 * call; the shape `cli/open-store.ts` takes as its `remote` factory.
 */
export async function openHttpTree(
  url: URL,
  env: NodeJS.ProcessEnv,
  options: Pick<
    HttpTreeOptions,
    "socketPath" | "watchPatienceMs" | "timeoutMs" | "onWatchLost" | "onWatchBack"
  > = {},
): Promise<Tree> {
  const tree = createHttpTree({
    url,
    transport: readFastLanes(env) ? "node" : "undici",
    timeoutMs: options.timeoutMs ?? readClientTimeout(env),
    ...(env.BYTESEEK_TOKEN ? { token: env.BYTESEEK_TOKEN } : {}),
    ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath }),
    ...(options.watchPatienceMs === undefined ? {} : { watchPatienceMs: options.watchPatienceMs }),
    ...(options.onWatchLost ? { onWatchLost: options.onWatchLost } : {}),
    ...(options.onWatchBack ? { onWatchBack: options.onWatchBack } : {}),
  });
  try {
    await tree.refresh();
  } catch (err) {
    await tree.close();
    throw err;
  }
  return tree;
}
