/**
 * `createHttpTree({url, token})`: the `Tree` interface over a byteseek server's HTTP routes, so the
 * `kvspace` CLI works the same with `KVSPACE=http://…`. Requests go through one undici pool with
 * keep-alive; an error answer comes back as the TreeError the server's tree raised (same code,
 * message and details); a server that cannot be reached is TREE_UNAVAILABLE. `watch` follows the
 * SSE stream and, when the connection drops (a restart), reconnects with `Last-Event-ID`.
 */

import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";
import { TreeError, type TreeErrorCode } from "../tree/errors.js";
import { parseDirKey, parseKey, parseValueKey } from "../tree/path.js";
import type {
  DelOptions,
  DelResult,
  DeltreeResult,
  ExportEntry,
  HistoryEntry,
  ImportResult,
  ListChild,
  ListOptions,
  ListResult,
  SetOptions,
  Tree,
  TreeNode,
  TxnOp,
  TxnRequest,
  TxnResult,
  WatchBatch,
  WatchEvent,
  WatchOptions,
  WriteResult,
} from "../tree/types.js";
import { checkValue, type TreeValue, type ValueKind, valueFromJson, valueToJson } from "../tree/value.js";

export interface HttpTreeOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:7411`. */
  url: string | URL;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Most connections kept open to the server (default 16). */
  connections?: number;
  /** Longest pause between watch reconnection attempts, ms (default 2000). */
  maxReconnectDelayMs?: number;
}

/** The tree's own error codes; any other error answer (401, 415…) becomes TREE_UNAVAILABLE. */
const TREE_CODES = new Set<string>([
  "TREE_INVALID_KEY",
  "TREE_INVALID_VALUE",
  "TREE_VALUE_TOO_LARGE",
  "TREE_NOT_FOUND",
  "TREE_NOT_A_DIRECTORY",
  "TREE_NOT_EMPTY",
  "TREE_READ_ONLY",
  "TREE_VERSION_MISMATCH",
  "TREE_EXISTS",
  "TREE_TXN_INVALID",
  "TREE_COMPACTED",
  "TREE_IMPORT_FAILED",
  "TREE_LOCKED",
  "TREE_CLOSED",
  "TREE_UNAVAILABLE",
  "TREE_INVALID_OPTION",
] satisfies TreeErrorCode[]);

// The wire forms, as server/schemas.ts declares them.
interface NodeWire {
  key: string;
  kind: ValueKind | "index";
  value?: unknown;
  count?: number;
  version: number;
  createRev: number;
  modRev: number;
  mtime: number;
  ro: boolean;
  vid?: string;
}
interface ErrorWire {
  error?: { code?: string; message?: string; [k: string]: unknown };
}

const encodeKey = (key: string): string => key.split("/").map(encodeURIComponent).join("/");

function nodeFromWire(w: NodeWire): TreeNode {
  const meta = {
    key: w.key,
    version: w.version,
    createRev: w.createRev,
    modRev: w.modRev,
    mtime: w.mtime,
    ro: w.ro,
    ...(w.vid === undefined ? {} : { vid: w.vid }),
  };
  if (w.kind === "index") return { ...meta, kind: "index", count: w.count ?? 0 };
  return { ...meta, kind: w.kind, value: valueFromJson(w.kind, w.value) };
}

function childFromWire(w: NodeWire & { name: string }): ListChild {
  if (w.kind === "index")
    return { ...(nodeFromWire(w) as TreeNode & { kind: "index"; count: number }), name: w.name };
  const meta = {
    name: w.name,
    key: w.key,
    kind: w.kind,
    version: w.version,
    createRev: w.createRev,
    modRev: w.modRev,
    mtime: w.mtime,
    ro: w.ro,
    ...(w.vid === undefined ? {} : { vid: w.vid }),
  };
  return w.value === undefined ? meta : { ...meta, value: valueFromJson(w.kind, w.value) };
}

const typed = (v: TreeValue) => ({ kind: v.kind, value: valueToJson(v) });

function opToWire(op: TxnOp): Record<string, unknown> {
  if (op.op === "set") {
    const out: Record<string, unknown> = { op: "set", key: op.key, ...typed(op.value) };
    if (op.ro !== undefined) out.ro = op.ro;
    if (op.force) out.force = true;
    if (op.vid !== undefined) out.vid = op.vid;
    return out;
  }
  return "force" in op && op.force ? { op: op.op, key: op.key, force: true } : { op: op.op, key: op.key };
}

/** Parses `text/event-stream` chunks into events. */
class SseParser {
  #buf = "";
  feed(chunk: string): Array<{ event: string; data: string; id?: string }> {
    this.#buf += chunk;
    const out: Array<{ event: string; data: string; id?: string }> = [];
    for (;;) {
      const end = this.#buf.search(/\r?\n\r?\n/);
      if (end < 0) return out;
      const block = this.#buf.slice(0, end);
      this.#buf = this.#buf.slice(end + (this.#buf[end] === "\r" ? 4 : 2));
      let event = "message";
      const data: string[] = [];
      let id: string | undefined;
      for (const line of block.split(/\r?\n/)) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
        else if (field === "id") id = value;
      }
      if (data.length > 0)
        out.push(id === undefined ? { event, data: data.join("\n") } : { event, data: data.join("\n"), id });
    }
  }
}

/** A Tree answered by a byteseek server. */
export function createHttpTree(options: HttpTreeOptions): Tree {
  const base = new URL(options.url);
  const prefix = base.pathname.replace(/\/+$/, "");
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 16,
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
  const maxDelay = options.maxReconnectDelayMs ?? 2000;
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

  function unreachable(err: unknown): TreeError {
    return new TreeError(
      "TREE_UNAVAILABLE",
      `cannot reach the byteseek server at ${base.href}: ${(err as Error).message}`,
      { url: base.href },
      err,
    );
  }

  async function errorFrom(status: number, text: string): Promise<TreeError> {
    let body: ErrorWire = {};
    try {
      body = JSON.parse(text) as ErrorWire;
    } catch {
      // Not our JSON (a proxy's page?): reported below with the status.
    }
    const { code, message, ...details } = body.error ?? {};
    if (details.current && typeof details.current === "object")
      details.current = nodeFromWire(details.current as NodeWire);
    if (typeof code === "string" && TREE_CODES.has(code))
      return new TreeError(code as TreeErrorCode, message ?? code, details);
    return new TreeError(
      "TREE_UNAVAILABLE",
      `the server answered ${status}${code ? ` ${code}` : ""}: ${message ?? text.slice(0, 200)}`,
      { status, ...(code ? { code } : {}) },
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
    let body: string | Readable | undefined;
    if (call.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(call.json);
    } else if (call.body !== undefined) {
      headers["content-type"] = call.contentType ?? "application/x-ndjson";
      body = Readable.from(call.body);
    }
    let res: Awaited<ReturnType<typeof pool.request>>;
    try {
      res = await pool.request({ method: call.method, path: pathOf(call), headers, body: body ?? null });
    } catch (err) {
      if (err instanceof TreeError) throw err;
      throw unreachable(err);
    }
    noteRevision(res.headers);
    const text = await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300)
      return { status: res.statusCode, body: text === "" ? undefined : (JSON.parse(text) as T) };
    if (accept404 && res.statusCode === 404) return { status: 404, body: undefined };
    throw await errorFrom(res.statusCode, text);
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
    try {
      while (!ac.signal.aborted) {
        const headers: Record<string, string> = { ...auth, accept: "text/event-stream" };
        if (cursor !== undefined) headers["last-event-id"] = String(cursor);
        let res: Awaited<ReturnType<typeof pool.request>>;
        try {
          res = await pool.request({
            method: "GET",
            path,
            headers,
            signal: ac.signal,
          });
        } catch (err) {
          if (ac.signal.aborted) return;
          if (closed) throw new TreeError("TREE_CLOSED", "the tree is closed");
          void err; // the server is away (restarting?): try again, a little later each time.
          await sleep(delay, undefined, { signal: ac.signal }).catch(() => {});
          delay = Math.min(delay * 2, maxDelay);
          continue;
        }
        noteRevision(res.headers);
        if (res.statusCode !== 200) {
          const text = await res.body.text();
          if (res.statusCode >= 500) {
            await sleep(delay, undefined, { signal: ac.signal }).catch(() => {});
            delay = Math.min(delay * 2, maxDelay);
            continue;
          }
          throw await errorFrom(res.statusCode, text);
        }
        delay = 50;
        const parser = new SseParser();
        res.body.setEncoding("utf8");
        try {
          for await (const chunk of res.body) {
            for (const ev of parser.feed(chunk as string)) {
              const data = JSON.parse(ev.data) as Record<string, unknown>;
              if (ev.event === "change") {
                const batch = data as { rev: number; events: Array<Record<string, unknown>> };
                if (cursor !== undefined && batch.rev <= cursor) continue;
                cursor = batch.rev;
                if (batch.rev > lastRev) lastRev = batch.rev;
                yield { rev: batch.rev, events: batch.events.map(eventFromWire) };
              } else if (ev.event === "progress") {
                const rev = Number(data.rev);
                if (cursor === undefined) cursor = rev;
                if (rev > lastRev) lastRev = rev;
              } else if (ev.event === "compacted" || ev.event === "error") {
                throw await errorFrom(ev.event === "compacted" ? 410 : 500, JSON.stringify({ error: data }));
              }
            }
          }
        } catch (err) {
          if (err instanceof TreeError) throw err;
          if (ac.signal.aborted) return;
          // The connection dropped: reconnect from the cursor.
        }
      }
    } finally {
      o.signal?.removeEventListener("abort", stop);
      watches.delete(ac);
      ac.abort();
    }
  }

  const tree: Tree = {
    async get(key) {
      const { body } = await send<NodeWire>(
        { method: "GET", path: treePath(key), query: { node: key.endsWith("/") } },
        true,
      );
      return body === undefined ? undefined : nodeFromWire(body);
    },
    async set(key, value: TreeValue, o: SetOptions = {}) {
      parseValueKey(key);
      checkValue(value);
      const headers = { ...condition(o.ifVersion), ...(o.create ? { "if-none-match": "*" } : {}) };
      const json: Record<string, unknown> = typed(value);
      if (o.ro !== undefined) json.ro = o.ro;
      if (o.vid !== undefined) json.vid = o.vid;
      const { body } = await send<WriteResult>({
        method: "PUT",
        path: treePath(key),
        query: { force: o.force },
        headers,
        json,
      });
      return body!;
    },
    async del(key, o: DelOptions = {}) {
      const { body } = await send<DelResult>({
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
      const { body } = await send<DeltreeResult>({
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
      return (await send<WriteResult>({ method: "PUT", path: treePath(dir) })).body!;
    },
    async list(dir, o: ListOptions = {}): Promise<ListResult> {
      parseDirKey(dir);
      if (o.limit !== undefined && (!Number.isInteger(o.limit) || o.limit < 1))
        throw new TreeError("TREE_INVALID_VALUE", `limit must be a positive integer, got ${o.limit}`);
      const { body } = await send<{
        key: string;
        children: Array<NodeWire & { name: string }>;
        next?: string;
      }>({
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
          const whole = await send<NodeWire>({ method: "GET", path: treePath(w.key) }, true);
          if (whole.body !== undefined) Object.assign(w, whole.body);
        }
      const out: ListResult = { key: b.key, children: b.children.map(childFromWire) };
      if (b.next !== undefined) out.next = b.next;
      return out;
    },
    async append(dir, value, o = {}) {
      parseDirKey(dir);
      checkValue(value);
      const json: Record<string, unknown> = typed(value);
      if (o.ro !== undefined) json.ro = o.ro;
      if (o.vid !== undefined) json.vid = o.vid;
      return (await send<WriteResult>({ method: "POST", path: treePath(dir), json })).body!;
    },
    async txn(req: TxnRequest): Promise<TxnResult> {
      const json = {
        compare: (req.compare ?? []).map((c) => {
          const base = { key: c.key, target: c.target, ...(c.op === undefined ? {} : { op: c.op }) };
          return c.target === "value" && typeof c.value === "object"
            ? { ...base, ...typed(c.value) }
            : { ...base, value: c.value };
        }),
        success: (req.success ?? []).map(opToWire),
        failure: (req.failure ?? []).map(opToWire),
      };
      const { body } = await send<{
        succeeded: boolean;
        rev: number;
        results: Array<null | WriteResult | NodeWire>;
      }>({
        method: "POST",
        path: "/v1/txn",
        json,
      });
      const b = body!;
      return {
        succeeded: b.succeeded,
        rev: b.rev,
        results: b.results.map((r) => (r === null ? null : "createRev" in r ? nodeFromWire(r) : r)),
      };
    },
    watch,
    async history(key): Promise<HistoryEntry[]> {
      parseValueKey(key);
      const { body } = await send<{
        history: Array<Omit<HistoryEntry, "key" | "value"> & { value: unknown }>;
      }>({ method: "GET", path: treePath(key), query: { history: true } }, true);
      if (body === undefined) return [];
      return body.history.map((h) => {
        const e: HistoryEntry = {
          key,
          kind: h.kind,
          value: valueFromJson(h.kind, h.value),
          version: h.version,
          modRev: h.modRev,
          mtime: h.mtime,
        };
        if (h.deleted) e.deleted = true;
        return e;
      });
    },
    export: (dir = "/") => exportLines(dir),
    async import(entries, io = {}): Promise<ImportResult> {
      async function* lines(): AsyncGenerator<string> {
        for await (const e of entries) yield `${typeof e === "string" ? e : JSON.stringify(e)}\n`;
      }
      const path = io.force ? "/v1/import?force=1" : "/v1/import";
      return (await send<ImportResult>({ method: "POST", path, body: lines() })).body!;
    },
    async clear(): Promise<WriteResult> {
      const { body } = await send<DeltreeResult>({
        method: "DELETE",
        path: "/v1/tree/",
        query: { force: "1" },
      });
      return { key: "/", rev: body!.rev, version: 0 };
    },
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
    let res: Awaited<ReturnType<typeof pool.request>>;
    try {
      res = await pool.request({
        method: "GET",
        path: `${prefix}/v1/export${encodeKey(parseDirKey(dir).key)}`,
        headers: auth,
      });
    } catch (err) {
      throw unreachable(err);
    }
    noteRevision(res.headers);
    if (res.statusCode !== 200) throw await errorFrom(res.statusCode, await res.body.text());
    res.body.setEncoding("utf8");
    let rest = "";
    for await (const chunk of res.body) {
      rest += chunk as string;
      const lines = rest.split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) if (line !== "") yield JSON.parse(line) as ExportEntry;
    }
    if (rest !== "") yield JSON.parse(rest) as ExportEntry;
  }

  /** Learns the server's revision and oldest resumable revision (revision() is synchronous). */
  async function refresh(): Promise<void> {
    const { body } = await send<{ rev: number; compactedRev: number }>({ method: "GET", path: "/healthz" });
    if (body) {
      lastRev = Math.max(lastRev, body.rev);
      compacted = body.compactedRev;
    }
  }
  Object.defineProperty(tree, "refresh", { value: refresh, enumerable: false });
  return tree;
}

function eventFromWire(w: Record<string, unknown>): WatchEvent {
  const ev: WatchEvent = {
    type: w.type as WatchEvent["type"],
    key: w.key as string,
    rev: w.rev as number,
    prevRev: w.prevRev as number,
  };
  if (w.kind !== undefined) ev.kind = w.kind as WatchEvent["kind"] & string;
  if (w.kind !== undefined && w.kind !== "index" && w.value !== undefined)
    ev.value = valueFromJson(w.kind, w.value);
  if (w.version !== undefined) ev.version = w.version as number;
  return ev;
}

/**
 * Opens a tree on a server and checks it answers (and the token is right) before the first real
 * call; the shape `cli/open-store.ts` takes as its `remote` factory.
 */
export async function openHttpTree(url: URL, env: NodeJS.ProcessEnv): Promise<Tree> {
  const tree = createHttpTree({ url, ...(env.BYTESEEK_TOKEN ? { token: env.BYTESEEK_TOKEN } : {}) });
  try {
    await (tree as Tree & { refresh(): Promise<void> }).refresh();
  } catch (err) {
    await tree.close();
    throw err;
  }
  return tree;
}
