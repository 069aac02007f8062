/**
 * The OpenAPI document tells the truth: every schema compiles in ajv's strict mode, every example
 * validates against its schema, and live answers of representative routes (a real server on port 0)
 * have a documented status, a body valid for the documented schema and media type, and exactly
 * the documented headers. (test/server/docs-page.test.ts: the page rendered from it.) Over 400
 * lines: one server for the whole suite, one live case per documented route.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import pino from "pino";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../server/main.js";
import { RESPONSE_HEADERS } from "../../server/openapi.js";
import { startTestServer, tempDir } from "./helpers.js";

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

const TOKEN = "tok-openapi-7c1d";
const AUTH = { authorization: `Bearer ${TOKEN}` };

type Json = Record<string, unknown>;
interface Media {
  schema: Json;
  examples?: Record<string, { value: unknown }>;
  "x-events"?: Record<string, Json>;
}
interface Response {
  description: string;
  headers?: Record<string, { required?: boolean; schema: Json }>;
  content?: Record<string, Media>;
}
interface Operation {
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; schema: Json; required?: boolean }>;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, Response>;
}
interface Doc {
  openapi: string;
  security?: unknown[];
  components: { securitySchemes: Record<string, Json> };
  paths: Record<string, Record<string, Operation>>;
}

let dir: Awaited<ReturnType<typeof tempDir>>;
let server: RunningServer;
let doc: Doc;
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
// Compiled once per distinct schema: the document repeats the same ones (the error shape, headers).
const compiled = new Map<string, ValidateFunction>();
const validator = (schema: Json): ValidateFunction => {
  const text = JSON.stringify(schema);
  let v = compiled.get(text);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(text, v);
  }
  return v;
};

beforeAll(async () => {
  dir = await tempDir();
  server = await startServer({
    env: { KVSPACE: `${dir.path}/store`, BYTESEEK_PORT: "0", BYTESEEK_TOKEN: TOKEN },
    cwd: dir.path,
    logger: pino({ level: "silent" }),
    handleSignals: false,
  });
  // Behind the credential, as every route but /healthz and the page's shell is.
  const res = await request(`${server.url}/openapi.json`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.statusCode).toBe(200);
  doc = inlineRefs((await res.body.json()) as Doc);
});
afterAll(async () => {
  await server.close();
  await dir.remove();
});

/** Every schema in the document with where it sits, and the examples that go with it. */
function schemasOf(d: Doc): Array<{ where: string; schema: Json; examples: unknown[] }> {
  const out: Array<{ where: string; schema: Json; examples: unknown[] }> = [];
  const media = (where: string, m: Media) => {
    out.push({ where, schema: m.schema, examples: Object.values(m.examples ?? {}).map((e) => e.value) });
    for (const [name, s] of Object.entries(m["x-events"] ?? {}))
      out.push({ where: `${where} event ${name}`, schema: s, examples: [] });
  };
  for (const [method, path, op] of operationsOf(d)) {
    const at = `${method.toUpperCase()} ${path}`;
    for (const p of op.parameters ?? [])
      out.push({ where: `${at} ${p.in} ${p.name}`, schema: p.schema, examples: [] });
    for (const [type, m] of Object.entries(op.requestBody?.content ?? {})) media(`${at} body ${type}`, m);
    for (const [status, r] of Object.entries(op.responses)) {
      for (const [name, h] of Object.entries(r.headers ?? {}))
        out.push({ where: `${at} ${status} header ${name}`, schema: h.schema, examples: [] });
      for (const [type, m] of Object.entries(r.content ?? {})) media(`${at} ${status} ${type}`, m);
    }
  }
  return out;
}
/** The document with every `$ref` replaced by what it points at (failing on one that points nowhere). */
function inlineRefs(d: Doc): Doc {
  const at = (ref: string): unknown => {
    let node: unknown = d;
    for (const part of ref.replace(/^#\//, "").split("/")) node = (node as Json | undefined)?.[part];
    if (node === undefined) throw new Error(`$ref ${ref} points nowhere`);
    return node;
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const ref = (v as Json).$ref;
    if (typeof ref === "string" && ref.startsWith("#/")) return walk(at(ref));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
  };
  return walk(d) as Doc;
}

const operationsOf = (d: Doc): Array<[string, string, Operation]> =>
  Object.entries(d.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [method, path, op] as [string, string, Operation]),
  );

/** The documented operation a request lands on: the path template matched segment by segment. */
function operationFor(method: string, url: string): { path: string; op: Operation } {
  const path = url.split("?")[0]!;
  for (const [template, ops] of Object.entries(doc.paths)) {
    const re = new RegExp(
      `^${template
        .split(/(\{[^}]+\})/)
        .map((part) =>
          part === "{key}" || part === "{prefix}" || part === "{dir}"
            ? ".*"
            : part.startsWith("{")
              ? "[^/]+"
              : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"),
        )
        .join("")}$`,
    );
    const op = ops[method.toLowerCase()];
    if (op && re.test(path)) return { path: template, op };
  }
  throw new Error(`no documented operation for ${method} ${path}`);
}

interface Live {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request's answer, the whole body (an event stream: until `until` holds of the text so far). */
async function live(
  method: "GET" | "PUT" | "POST" | "DELETE",
  url: string,
  o: {
    headers?: Record<string, string>;
    body?: unknown;
    type?: string;
    until?: (text: string) => boolean;
  } = {},
): Promise<Live> {
  const ac = new AbortController();
  const headers: Record<string, string> = { ...AUTH, ...o.headers };
  let body: string | null = null;
  if (o.body !== undefined) {
    body = typeof o.body === "string" && o.type ? o.body : JSON.stringify(o.body);
    headers["content-type"] = o.type ?? "application/json";
  }
  const res = await request(`${server.url}${url}`, { method, headers, body, signal: ac.signal });
  let text = "";
  if (o.until) {
    try {
      for await (const chunk of res.body) {
        text += chunk.toString();
        if (o.until(text)) break;
      }
    } finally {
      ac.abort();
      res.body.on("error", () => {});
    }
  } else text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

const DOCUMENTED = Object.keys(RESPONSE_HEADERS).map((h) => h.toLowerCase());

/** Checks a live answer against the document: status, media type, body, headers. */
function expectDocumented(method: string, url: string, a: Live): void {
  const { path, op } = operationFor(method, url);
  const at = `${method} ${url} (${path}) → ${a.status}`;
  const r = op.responses[String(a.status)];
  expect(r, `${at}: status not documented`).toBeDefined();
  // Headers: every documented one the server sent is documented for this answer, with a valid value;
  // every required one was sent.
  const documented = new Map(Object.entries(r!.headers ?? {}).map(([n, h]) => [n.toLowerCase(), h]));
  for (const name of DOCUMENTED) {
    const sent = a.headers[name];
    const h = documented.get(name);
    if (sent !== undefined) {
      expect(h, `${at}: sends ${name}, not documented`).toBeDefined();
      const v = validator(h!.schema);
      expect(v(sent), `${at}: ${name}: ${String(sent)} ${ajv.errorsText(v.errors)}`).toBe(true);
    } else if (h?.required) expect.fail(`${at}: documents ${name} as required, did not send it`);
  }
  const type = String(a.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim();
  if (a.status === 304) {
    expect(a.text).toBe("");
    expect(r!.content).toBeUndefined();
    return;
  }
  const media = r!.content?.[type];
  expect(media, `${at}: media type ${type} not documented (${Object.keys(r!.content ?? {})})`).toBeDefined();
  const v = validator(media!.schema);
  if (type === "application/json") {
    const body = JSON.parse(a.text) as unknown;
    expect(v(body), `${at}: ${ajv.errorsText(v.errors)}: ${a.text.slice(0, 300)}`).toBe(true);
  } else {
    expect(v(a.text), `${at}: ${ajv.errorsText(v.errors)}`).toBe(true);
  }
  if (type === "text/event-stream") {
    const events = media!["x-events"];
    if (events)
      for (const block of a.text.split("\n\n")) {
        const name = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (name === undefined || data === undefined) continue;
        expect(events[name], `${at}: event ${name} not documented`).toBeDefined();
        const ev = validator(events[name]!);
        expect(ev(JSON.parse(data)), `${at}: event ${name}: ${ajv.errorsText(ev.errors)}`).toBe(true);
      }
  }
  if (type === "application/x-ndjson")
    for (const line of a.text.split("\n").filter((l) => l !== ""))
      expect(() => JSON.parse(line)).not.toThrow();
}

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 whose every schema compiles in ajv's strict mode", () => {
    const all = schemasOf(doc);
    expect(all.length).toBeGreaterThan(100);
    for (const { where, schema } of all) expect(() => validator(schema), where).not.toThrow();
    expect(doc.openapi).toBe("3.1.0");
  });

  it("gives examples for every route, each valid against the schema beside it", () => {
    const checked = new Set<string>();
    for (const { where, schema, examples } of schemasOf(doc))
      for (const example of examples) {
        const v = validator(schema);
        expect(v(example), `${where}: ${ajv.errorsText(v.errors)}`).toBe(true);
        checked.add(where.split(" ").slice(0, 2).join(" "));
      }
    const withoutExample = operationsOf(doc)
      .map(([method, path]) => `${method.toUpperCase()} ${path}`)
      .filter((op) => !checked.has(op) && op !== "GET /mcp" && op !== "POST /mcp" && op !== "DELETE /mcp");
    expect(withoutExample).toEqual([]);
  });

  it("names the wildcard path parameter instead of '*'", () => {
    expect(Object.keys(doc.paths).filter((p) => p.includes("{*}"))).toEqual([]);
    for (const [path, name] of [
      ["/v1/tree/{key}", "key"],
      ["/v1/watch/{prefix}", "prefix"],
      ["/v1/export/{dir}", "dir"],
    ] as const) {
      const params = doc.paths[path]?.get?.parameters ?? [];
      expect(params.filter((p) => p.in === "path").map((p) => [p.name, p.required])).toEqual([[name, true]]);
    }
  });

  it("labels event streams text/event-stream and NDJSON application/x-ndjson, not JSON", () => {
    expect(Object.keys(doc.paths["/v1/watch/{prefix}"]!.get!.responses["200"]!.content!)).toEqual([
      "text/event-stream",
    ]);
    expect(Object.keys(doc.paths["/v1/export/{dir}"]!.get!.responses["200"]!.content!)).toEqual([
      "application/x-ndjson",
    ]);
    expect(Object.keys(doc.paths["/v1/import"]!.post!.requestBody!.content)).toContain(
      "application/x-ndjson",
    );
    expect(Object.keys(doc.paths["/v1/agent/turn"]!.post!.responses["200"]!.content!).sort()).toEqual([
      "application/json",
      "text/event-stream",
    ]);
  });

  it("documents the condition headers in and ETag, Location, Last-Event-ID out where routes use them", () => {
    const names = (op: Operation) =>
      (op.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name);
    const tree = doc.paths["/v1/tree/{key}"]!;
    expect(names(tree.get!)).toEqual(["If-None-Match"]);
    expect(names(tree.put!).sort()).toEqual(["If-Match", "If-None-Match"]);
    expect(names(tree.delete!)).toEqual(["If-Match"]);
    expect(names(doc.paths["/v1/watch/{prefix}"]!.get!)).toEqual(["Last-Event-ID"]);
    expect(tree.post!.responses["201"]!.headers).toMatchObject({
      Location: { required: true },
      ETag: { required: true },
    });
    expect(tree.get!.responses["304"]!.headers).toMatchObject({ ETag: { required: true } });
    for (const [method, path, op] of operationsOf(doc))
      for (const [status, r] of Object.entries(op.responses))
        expect(Object.keys(r.headers ?? {}), `${method} ${path} ${status}`).toEqual(
          expect.arrayContaining(["X-Byteseek-Revision", "X-Byteseek-Compacted-Revision", "X-Request-Id"]),
        );
  });

  it("applies the bearer scheme to every route the token guards, and not to /healthz", () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearer: [] }]);
    for (const [method, path, op] of operationsOf(doc)) {
      const open = path === "/healthz";
      expect(op.security, `${method} ${path}`).toEqual(open ? [] : undefined);
      expect(op.responses["401"] !== undefined, `${method} ${path} documents 401`).toBe(!open);
    }
  });

  it("claims no token and no 401 on a server started without one", async () => {
    const s = await startTestServer({ listen: false });
    try {
      const d = inlineRefs((await s.app.inject({ method: "GET", url: "/openapi.json" })).json() as Doc);
      expect(d.security).toBeUndefined();
      for (const [method, path, op] of operationsOf(d)) {
        expect(op.security, `${method} ${path}`).toBeUndefined();
        expect(op.responses["401"], `${method} ${path}`).toBeUndefined();
      }
    } finally {
      await s.close();
    }
  });
});

describe("live answers match the document", () => {
  it("for a value's PUT, GET (fast path and router), 304, 412, DELETE and 404", async () => {
    const put = await live("PUT", "/v1/tree/oa/note", { body: "hello world" });
    expect(put.status).toBe(200);
    expectDocumented("PUT", "/v1/tree/oa/note", put);
    const get = await live("GET", "/v1/tree/oa/note");
    expect(get.headers.etag).toBe('"1"');
    expectDocumented("GET", "/v1/tree/oa/note", get);
    const history = await live("GET", "/v1/tree/oa/note?history=1");
    expectDocumented("GET", "/v1/tree/oa/note?history=1", history);
    const notModified = await live("GET", "/v1/tree/oa/note", { headers: { "if-none-match": '"1"' } });
    expect(notModified.status).toBe(304);
    expectDocumented("GET", "/v1/tree/oa/note", notModified);
    const stale = await live("PUT", "/v1/tree/oa/note", { body: 2, headers: { "if-match": '"7"' } });
    expect(stale.status).toBe(412);
    expectDocumented("PUT", "/v1/tree/oa/note", stale);
    const mkdir = await live("PUT", "/v1/tree/oa/dir/");
    expectDocumented("PUT", "/v1/tree/oa/dir/", mkdir);
    const del = await live("DELETE", "/v1/tree/oa/note", { headers: { "if-match": '"1"' } });
    expect(del.status).toBe(200);
    expectDocumented("DELETE", "/v1/tree/oa/note", del);
    const gone = await live("GET", "/v1/tree/oa/note");
    expect(gone.status).toBe(404);
    expectDocumented("GET", "/v1/tree/oa/note", gone);
  });

  it("for a directory: append (201 with Location), listing, node, deltree", async () => {
    const appended = await live("POST", "/v1/tree/oa/list/", { body: { kind: "int64", value: 5 } });
    expect(appended.status).toBe(201);
    expect(appended.headers.location).toBe("/v1/tree/oa/list/0");
    expectDocumented("POST", "/v1/tree/oa/list/", appended);
    const notDir = await live("POST", "/v1/tree/oa/list/0", { body: 1 });
    expect(notDir.status).toBe(405);
    expectDocumented("POST", "/v1/tree/oa/list/0", notDir);
    for (const url of ["/v1/tree/oa/", "/v1/tree/oa/?recursive=1", "/v1/tree/oa/list/?node=1"]) {
      const a = await live("GET", url);
      expect(a.status, url).toBe(200);
      expectDocumented("GET", url, a);
    }
    const deltree = await live("DELETE", "/v1/tree/oa/list/");
    expectDocumented("DELETE", "/v1/tree/oa/list/", deltree);
  });

  it("for a transaction, its refusal, export (NDJSON) and import", async () => {
    const txn = await live("POST", "/v1/txn", {
      body: {
        compare: [],
        success: [
          { op: "set", key: "/oa/t", value: 1 },
          { op: "get", key: "/oa/t" },
        ],
      },
    });
    expect(txn.status).toBe(200);
    expectDocumented("POST", "/v1/txn", txn);
    const bad = await live("POST", "/v1/txn", { body: { sucess: [] } });
    expect(bad.status).toBe(400);
    expectDocumented("POST", "/v1/txn", bad);
    const exported = await live("GET", "/v1/export/oa/");
    expect(exported.status).toBe(200);
    expectDocumented("GET", "/v1/export/oa/", exported);
    const imported = await live("POST", "/v1/import", {
      body: exported.text.replaceAll('"/oa/', '"/oa2/'),
      type: "application/x-ndjson",
    });
    expect(imported.status).toBe(200);
    expectDocumented("POST", "/v1/import", imported);
  });

  it("for a watch: a text/event-stream whose events match their documented schemas", async () => {
    const url = "/v1/watch/oa/";
    const pending = live("GET", url, {
      headers: { accept: "text/event-stream" },
      until: (text) => text.includes("event: change"),
    });
    // The stream is open once its progress event is out; then a write shows up as a change.
    setTimeout(() => void live("PUT", "/v1/tree/oa/watched", { body: 1 }), 100);
    const a = await pending;
    expect(a.status).toBe(200);
    expect(a.text).toContain("event: progress");
    expectDocumented("GET", url, a);
    const resumed = await live("GET", url, {
      headers: { "last-event-id": "1" },
      until: (text) => text.includes("event: change"),
    });
    expectDocumented("GET", url, resumed);
  });

  it("for the approvals, the prompt, the MCP registry and an agent turn without a model", async () => {
    for (const url of ["/v1/approvals", "/v1/prompt?vid=r1&input=hi", "/v1/mcp"]) {
      const a = await live("GET", url);
      expect(a.status, url).toBe(200);
      expectDocumented("GET", url, a);
    }
    const sync = await live("POST", "/v1/mcp/sync", { body: {} });
    expect(sync.status).toBe(200);
    expectDocumented("POST", "/v1/mcp/sync", sync);
    const noRun = await live("GET", "/v1/agent/runs/r1/diff/r2");
    expect(noRun.status).toBe(404);
    expectDocumented("GET", "/v1/agent/runs/r1/diff/r2", noRun);
    const noDetail = await live("GET", "/v1/agent/runs/r1");
    expect(noDetail.status).toBe(404);
    expectDocumented("GET", "/v1/agent/runs/r1", noDetail);
    const noReplay = await live("POST", "/v1/agent/runs/r1/replay", { body: {} });
    expect(noReplay.status).toBe(404);
    expectDocumented("POST", "/v1/agent/runs/r1/replay", noReplay);
    const none = await live("POST", "/v1/approvals/r1/9", { body: { decision: "deny" } });
    expect(none.status).toBe(404);
    expectDocumented("POST", "/v1/approvals/r1/9", none);
    // No model is configured here: the turn answers its LLM error, documented as 503.
    const turn = await live("POST", "/v1/agent/turn", { body: { input: "hi" } });
    expect(turn.status).toBe(503);
    expectDocumented("POST", "/v1/agent/turn", turn);
  });

  it("for the tools list, a call, /healthz without a token and a 401 without one", async () => {
    const tools = await live("GET", "/v1/tools");
    expect(tools.status).toBe(200);
    expectDocumented("GET", "/v1/tools", tools);
    const call = await live("POST", "/v1/tools/tree.get/call", { body: { args: { key: "/oa/t" } } });
    expect(call.status).toBe(200);
    expectDocumented("POST", "/v1/tools/tree.get/call", call);
    const health = await live("GET", "/healthz", { headers: { authorization: "" } });
    expect(health.status).toBe(200);
    expectDocumented("GET", "/healthz", health);
    for (const [method, url] of [
      ["GET", "/v1/tree/oa/t"],
      ["GET", "/v1/tools"],
      ["POST", "/v1/txn"],
    ] as const) {
      const refused = await live(method, url, { headers: { authorization: "Bearer wrong" } });
      expect(refused.status).toBe(401);
      expectDocumented(method, url, refused);
    }
  });
});
