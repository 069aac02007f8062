/**
 * The fast path (server/fast-path.ts, plain GETs and PUTs) must answer exactly what fastify's routes answer. Two real
 * servers on identical stores, one with the fast path and one without, get the same requests in the
 * same order; every answer (status, headers but Date, body with mtime set aside) and every log line
 * must match, and an onResponse hook on fastify shows which requests the fast path took.
 */

import { connect } from "node:net";
import { Readable } from "node:stream";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { HOOKS_THE_FAST_PATH_DOES } from "../../server/answer.js";
import { eventually, startTestServer, type TestServer } from "./helpers.js";

interface Case {
  name: string;
  method: "GET" | "PUT" | "POST" | "DELETE" | "HEAD";
  path: string;
  /** A stream is made per send (one request each): it goes chunked. */
  body?: string | Buffer | (() => Readable);
  headers?: Record<string, string>;
  /** Whether the fast path takes it (when the server has no token). */
  fast: boolean;
}

const JSON_TYPE = { "content-type": "application/json" };
const BODY_LIMIT = 4096;

/** A PUT of a JSON body to a plain key: the fast path's, whatever the body holds. */
const put = (name: string, path: string, body: string): Case => ({
  name,
  method: "PUT",
  path,
  body,
  headers: JSON_TYPE,
  fast: true,
});

const CASES: Case[] = [
  put("put a string", "/v1/tree/a/b", '"hello"'),
  { name: "get it", method: "GET", path: "/v1/tree/a/b", fast: true },
  { name: "get a missing key", method: "GET", path: "/v1/tree/a/missing", fast: true },
  put(
    "put the typed form, int64 beyond 2^53, an owner",
    "/v1/tree/n/big",
    '{"kind":"int64","value":"9007199254740993","ro":false,"vid":"run-1"}',
  ),
  { name: "get the int64", method: "GET", path: "/v1/tree/n/big", fast: true },
  {
    name: "put with charset",
    method: "PUT",
    path: "/v1/tree/a/c",
    body: "[1,2,3]",
    headers: { "content-type": "application/json; charset=utf-8" },
    fast: true,
  },
  put("put bad JSON", "/v1/tree/a/bad", "{bad"),
  put("put a body with __proto__", "/v1/tree/a/proto", '{"__proto__":{"x":1}}'),
  put("put an unknown kind", "/v1/tree/a/kind", '{"kind":"nope","value":1}'),
  {
    name: "put bytes that are not UTF-8",
    method: "PUT",
    path: "/v1/tree/a/bytes",
    body: Buffer.from([0x22, 0xff, 0xfe, 0x41, 0x22]),
    headers: JSON_TYPE,
    fast: true,
  },
  { name: "get them back", method: "GET", path: "/v1/tree/a/bytes", fast: true },
  {
    name: "put a value over the tree's limit",
    method: "PUT",
    path: "/v1/tree/a/large",
    body: JSON.stringify("x".repeat(3000)),
    headers: JSON_TYPE,
    fast: true,
  },
  put("put read-only", "/v1/tree/ro/k", '{"kind":"char/utf8","value":"locked","ro":true}'),
  put("put over read-only", "/v1/tree/ro/k", '"x"'),
  put("put with a '..' segment", "/v1/tree/a/../b", "1"),
  { name: "get with a '.' segment", method: "GET", path: "/v1/tree/a/./b", fast: true },
  { name: "get with '//'", method: "GET", path: "/v1/tree/a//b", fast: true },
  put("put under a value", "/v1/tree/a/b/c", "1"),
  {
    name: "a request id of the client's",
    method: "GET",
    path: "/v1/tree/a/b",
    headers: { "x-request-id": "client-7" },
    fast: true,
  },
  // What stays with fastify.
  { name: "get with a query", method: "GET", path: "/v1/tree/a/b?history=1", fast: false },
  { name: "get a directory", method: "GET", path: "/v1/tree/a/", fast: false },
  { name: "get a percent-encoded key", method: "GET", path: "/v1/tree/a/%62", fast: false },
  {
    name: "get with If-None-Match",
    method: "GET",
    path: "/v1/tree/a/b",
    headers: { "if-none-match": '"1"' },
    fast: false,
  },
  {
    name: "put with If-Match",
    method: "PUT",
    path: "/v1/tree/a/b",
    body: '"cas"',
    headers: { ...JSON_TYPE, "if-match": '"1"' },
    fast: false,
  },
  {
    name: "put text/plain",
    method: "PUT",
    path: "/v1/tree/a/text",
    body: "plain",
    headers: { "content-type": "text/plain" },
    fast: false,
  },
  { name: "put without a body", method: "PUT", path: "/v1/tree/a/empty", headers: JSON_TYPE, fast: false },
  {
    name: "put with a query",
    method: "PUT",
    path: "/v1/tree/ro/k?force=1",
    body: '"forced"',
    headers: JSON_TYPE,
    fast: false,
  },
  {
    name: "put with If-None-Match",
    method: "PUT",
    path: "/v1/tree/a/new",
    body: '"first"',
    headers: { ...JSON_TYPE, "if-none-match": "*" },
    fast: false,
  },
  {
    name: "put a JSON type spelt otherwise",
    method: "PUT",
    path: "/v1/tree/a/case",
    body: "1",
    headers: { "content-type": "Application/JSON" },
    fast: false,
  },
  {
    name: "put a chunked body",
    method: "PUT",
    path: "/v1/tree/a/chunked",
    body: () => Readable.from([Buffer.from('"chu'), Buffer.from('nked"')]),
    headers: JSON_TYPE,
    fast: false,
  },
  put("put a body at the body limit", "/v1/tree/a/at", JSON.stringify("x".repeat(BODY_LIMIT - 2))),
  {
    name: "put a body over the body limit",
    method: "PUT",
    path: "/v1/tree/a/over",
    body: JSON.stringify("x".repeat(BODY_LIMIT)),
    headers: JSON_TYPE,
    fast: false,
  },
  { name: "put a directory", method: "PUT", path: "/v1/tree/a/dir/", headers: JSON_TYPE, fast: false },
  // Bodies read exactly (server/exact-json.ts), the same on both paths.
  put("put a bare integer beyond 2^53", "/v1/tree/n/exact", "9007199254740993"),
  { name: "get it back exactly", method: "GET", path: "/v1/tree/n/exact", fast: true },
  put("put an integer out of int64's range", "/v1/tree/n/range", "-9223372036854775809"),
  put("put json holding an integer beyond 2^53", "/v1/tree/n/json", '{"a":[9007199254740993]}'),
  {
    name: "put JSON nested too deep",
    method: "PUT",
    path: "/v1/tree/n/deep",
    body: `${"[".repeat(300)}${"]".repeat(300)}`,
    headers: JSON_TYPE,
    fast: true,
  },
  put("put bad JSON past a long digit run", "/v1/tree/n/bad", "[12345678901234567,"),
  { name: "head", method: "HEAD", path: "/v1/tree/a/b", fast: false },
  { name: "delete", method: "DELETE", path: "/v1/tree/a/c", fast: false },
  { name: "get after the delete", method: "GET", path: "/v1/tree/a/c", fast: true },
];

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: unknown;
}

async function send(url: string, c: Case, extra: Record<string, string> = {}): Promise<Answer> {
  const res = await request(url + c.path, {
    method: c.method,
    headers: { ...c.headers, ...extra },
    ...(c.body === undefined ? {} : { body: typeof c.body === "function" ? c.body() : c.body }),
  });
  const text = await res.body.text();
  const { date: _date, ...headers } = res.headers;
  return { status: res.statusCode, headers, body: text === "" ? "" : withoutMtime(JSON.parse(text)) };
}

/** The body with every mtime set to 0: the two stores write at different instants. */
function withoutMtime(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutMtime);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === "mtime" ? 0 : withoutMtime(x)]));
}

/** A server's log lines since `from`, without what differs between two runs (time, ms). */
function logLines(s: TestServer, from: number): unknown[] {
  return s.logs.lines.slice(from).map(({ time: _t, ms, ...rest }) => ({ ...rest, ms: typeof ms }));
}

describe("the fast path for plain GET and PUT", () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  /** Two servers on fresh stores, the fast path on and off; `seen` counts requests fastify ran. */
  async function pair(token?: string) {
    const start = async (fastPath: boolean) => {
      const seen = { count: 0 };
      const s = await startTestServer({
        fastPath,
        tree: { maxValueBytes: 2000 },
        bodyLimit: BODY_LIMIT,
        ...(token ? { token } : {}),
        prepare: (app) =>
          app.addHook("onResponse", (_req, _reply, done) => {
            seen.count++;
            done();
          }),
      });
      servers.push(s);
      return { s, seen };
    };
    return { fast: await start(true), plain: await start(false) };
  }

  it("answers every case as fastify's routes do, status, headers, body and log line", async () => {
    const { fast, plain } = await pair();
    for (const c of CASES) {
      const logsFrom = [fast.s.logs.lines.length, plain.s.logs.lines.length] as const;
      const fastSeen = fast.seen.count;
      const a = await send(fast.s.url, c);
      const b = await send(plain.s.url, c);
      expect(a, c.name).toEqual(b);
      expect(fast.seen.count - fastSeen, `${c.name}: taken by the fast path`).toBe(c.fast ? 0 : 1);
      // The log line is written after the answer: wait for both.
      await expect
        .poll(() => fast.s.logs.lines.length > logsFrom[0] && plain.s.logs.lines.length > logsFrom[1])
        .toBe(true);
      expect(logLines(fast.s, logsFrom[0]), c.name).toEqual(logLines(plain.s, logsFrom[1]));
    }
    expect(plain.seen.count).toBe(CASES.length);
  });

  it("is on by default, and BYTESEEK_FAST=0 (the reference lanes) leaves every request to fastify's routes", async () => {
    const counted = async (setting: string | undefined) => {
      const seen = { count: 0 };
      const before = process.env.BYTESEEK_FAST;
      if (setting === undefined) delete process.env.BYTESEEK_FAST;
      else process.env.BYTESEEK_FAST = setting;
      try {
        const s = await startTestServer({
          prepare: (app) =>
            app.addHook("onResponse", (_req, _reply, done) => {
              seen.count++;
              done();
            }),
        });
        servers.push(s);
        return { s, seen };
      } finally {
        if (before === undefined) delete process.env.BYTESEEK_FAST;
        else process.env.BYTESEEK_FAST = before;
      }
    };
    const reference = await counted("0");
    const fast = await counted(undefined);
    for (const c of CASES.slice(0, 2)) {
      const [a, b] = [await send(fast.s.url, c), await send(reference.s.url, c)];
      expect(a, c.name).toEqual(b);
    }
    expect(fast.seen.count).toBe(0);
    expect(reference.seen.count).toBe(2);
  });

  it("leaves a request without the right token to fastify's 401, and serves one with it", async () => {
    const { fast, plain } = await pair("s3cret");
    const put = CASES[0]!;
    const get = CASES[1]!;
    for (const [c, auth, taken] of [
      [put, undefined, false],
      [put, "Bearer wrong", false],
      [put, "Bearer s3cret", true],
      [get, "Bearer s3cret", true],
      [get, "bearer   s3cret", true],
      [get, undefined, false],
    ] as const) {
      const extra: Record<string, string> = auth ? { authorization: auth } : {};
      const before = fast.seen.count;
      const a = await send(fast.s.url, c, extra);
      const b = await send(plain.s.url, c, extra);
      expect(a, `${c.name} with ${auth}`).toEqual(b);
      expect(a.status).toBe(auth?.toLowerCase().endsWith("s3cret") ? 200 : 401);
      expect(fast.seen.count - before).toBe(taken ? 0 : 1);
    }
  });

  it("answers a PUT whose body arrives once the server is closing with Connection: close, as fastify does", async () => {
    const { fast, plain } = await pair();
    for (const { s, seen } of [fast, plain]) {
      const before = seen.count;
      const port = Number(new URL(s.url).port);
      const socket = connect(port, "127.0.0.1");
      let answer = "";
      socket.on("data", (c) => {
        answer += c.toString();
      });
      const ended = new Promise<void>((r) => socket.on("close", () => r()));
      await new Promise<void>((r) => socket.once("connect", () => r()));
      socket.write(
        `PUT /v1/tree/late/k HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 6\r\n\r\n"la`,
      );
      // Closing begins once the server has the request: its connection is open and a moment passed.
      await eventually(
        () => new Promise<boolean>((r) => s.app.server.getConnections((_e, n) => r(n > 0))),
        "the connection is accepted",
      );
      await new Promise((r) => setTimeout(r, 50));
      const closed = s.app.close();
      socket.write('te"');
      try {
        await eventually(() => answer.endsWith("}"), "the whole answer");
        expect(answer).toMatch(/^HTTP\/1\.1 200 /);
        expect(answer.toLowerCase()).toContain("connection: close");
        // Told so, the server closes the connection itself, and closing completes.
        await ended;
        await closed;
      } finally {
        socket.destroy();
      }
      expect(seen.count - before, "taken by fastify").toBe(s === fast.s ? 0 : 1);
    }
    // The servers are closed: the afterEach closes them again, which fastify allows.
  });

  it("knows every per-request hook fastify runs: a new one fails here until the fast path does its work", async () => {
    const PER_REQUEST = [
      "onRequest",
      "preParsing",
      "preValidation",
      "preHandler",
      "preSerialization",
      "onSend",
      "onResponse",
      "onError",
      "onTimeout",
      "onRequestAbort",
    ];
    const symbol = (o: object, name: string) =>
      Object.getOwnPropertySymbols(o).find((x) => x.description === name);
    /** Every per-request hook of the app and of every plugin in it, as `type:function name`. */
    const hooksOf = (app: object): string[] => {
      const found = new Set<string>();
      const walk = (instance: object) => {
        const hooks = (instance as Record<symbol, Record<string, Array<{ name: string }>>>)[
          symbol(instance, "fastify.hooks")!
        ]!;
        for (const type of PER_REQUEST) for (const fn of hooks[type] ?? []) found.add(`${type}:${fn.name}`);
        for (const child of (instance as Record<symbol, object[]>)[symbol(instance, "fastify.children")!] ??
          [])
          walk(child);
      };
      walk(app);
      return [...found].sort();
    };
    const known = Object.entries(HOOKS_THE_FAST_PATH_DOES).flatMap(([type, names]) =>
      names.map((n) => `${type}:${n}`),
    );
    const plain = await startTestServer({ listen: false });
    servers.push(plain);
    expect(hooksOf(plain.app)).toEqual(known.sort());
    // The walk sees a hook a plugin adds, as a new one in server/ would be.
    const probed = await startTestServer({
      listen: false,
      prepare: (app) =>
        void app.register(async (child) => {
          child.addHook("preHandler", function probe(_req, _reply, done) {
            done();
          });
        }),
    });
    servers.push(probed);
    expect(hooksOf(probed.app)).toContain("preHandler:probe");
  });
});
