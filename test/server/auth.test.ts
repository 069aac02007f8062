import { request } from "undici";
import { describe, expect, it } from "vitest";
import { serveForAll } from "./helpers.js";

/** The server as `byteseek serve` builds it (tools, prompt, agent, web page), with a token. */
const TOKEN = "tok-3f9a-c0ffee";

interface Call {
  method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE";
  path: string;
  body?: string;
  type?: string;
}

const json = (body: unknown): Pick<Call, "body" | "type"> => ({
  body: JSON.stringify(body),
  type: "application/json",
});

/** One request per route of the API (hidden twins included), and what it answers with the token. */
const API: Array<Call & { ok: number | "any" }> = [
  { method: "PUT", path: "/v1/tree/auth/a", ...json(1), ok: 200 },
  { method: "GET", path: "/v1/tree/auth/a", ok: 200 },
  { method: "HEAD", path: "/v1/tree/auth/a", ok: 200 },
  { method: "GET", path: "/v1/tree/auth/", ok: 200 },
  { method: "GET", path: "/v1/tree", ok: 200 },
  { method: "POST", path: "/v1/tree/auth/list/", ...json("x"), ok: 201 },
  { method: "DELETE", path: "/v1/tree/auth/list/", ok: 200 },
  { method: "PUT", path: "/v1/tree/auth/gone", ...json(2), ok: 200 },
  { method: "DELETE", path: "/v1/tree/auth/gone", ok: 200 },
  { method: "POST", path: "/v1/txn", ...json({ compare: [], success: [], failure: [] }), ok: 200 },
  { method: "POST", path: "/v1/copy", ...json({ from: "/auth/a", to: "/auth/copied" }), ok: 200 },
  { method: "POST", path: "/v1/move", ...json({ from: "/auth/copied", to: "/auth/moved" }), ok: 200 },
  { method: "GET", path: "/v1/grep/auth/?pattern=a", ok: 200 },
  { method: "GET", path: "/v1/grep?pattern=a", ok: 200 },
  { method: "GET", path: "/v1/watch/auth/", ok: 200 },
  { method: "GET", path: "/v1/watch", ok: 200 },
  { method: "GET", path: "/v1/export/auth/", ok: 200 },
  { method: "GET", path: "/v1/export", ok: 200 },
  {
    method: "POST",
    path: "/v1/import",
    body: `${JSON.stringify({ key: "/auth/imported", kind: "int64", value: 1 })}\n`,
    type: "application/x-ndjson",
    ok: 200,
  },
  { method: "GET", path: "/v1/tools", ok: 200 },
  { method: "POST", path: "/v1/tools/no-such-tool/call", ...json({ args: {} }), ok: "any" },
  { method: "GET", path: "/v1/prompt", ok: 200 },
  { method: "GET", path: "/v1/approvals", ok: 200 },
  { method: "GET", path: "/v1/mcp", ok: 200 },
  { method: "POST", path: "/v1/mcp/sync", ...json({}), ok: 200 },
  // No such upstream server: any answer but 401 shows the token let it through.
  { method: "GET", path: "/v1/mcp/auth/review", ok: "any" },
  { method: "POST", path: "/v1/mcp/auth/accept", ...json({ hashes: {} }), ok: "any" },
  { method: "POST", path: "/v1/mcp/auth/login", ...json({}), ok: "any" },
  { method: "POST", path: "/v1/mcp/auth/logout", ...json({}), ok: "any" },
  // No such tool: any answer but 401 shows the token let it through.
  { method: "POST", path: "/v1/tools/no-such-tool/accept", ...json({}), ok: "any" },
  { method: "GET", path: "/v1/tools/no-such-tool/calls", ok: 200 },
  { method: "GET", path: "/v1/info", ok: 200 },
  { method: "GET", path: "/v1/overview", ok: 200 },
  { method: "GET", path: "/v1/agent/runs", ok: "any" },
  { method: "POST", path: "/v1/agent/runs/auth/resume", ...json({}), ok: "any" },
  { method: "GET", path: "/v1/agent/runs/auth/diff/auth2", ok: "any" },
  { method: "GET", path: "/v1/agent/runs/auth", ok: "any" },
  { method: "POST", path: "/v1/agent/runs/auth/replay", ...json({}), ok: "any" },
  // No such approval: the 404 shows the token let it through.
  { method: "POST", path: "/v1/approvals/auth/0", ...json({ decision: "approve" }), ok: 404 },
  // No model is configured here: any answer but 401 shows the token let it through.
  { method: "POST", path: "/v1/agent/turn", ...json({ message: "hi" }), ok: "any" },
  // MCP: a JSON-RPC answer (4xx for these bare requests) shows the token let it through.
  { method: "POST", path: "/mcp", ...json({ jsonrpc: "2.0", id: 1, method: "tools/list" }), ok: "any" },
  { method: "GET", path: "/mcp", ok: "any" },
  { method: "DELETE", path: "/mcp", ok: "any" },
  // No route: still behind the token, so an unknown path reveals nothing.
  { method: "GET", path: "/no/such/route", ok: 404 },
];

/** The web page's shell and assets: they hold no data, so they stay open. */
const PAGE = ["/", "/ui", "/ui/some/key", "/tools", "/tools/read", "/runs/r1", "/assets/style.css"];

/** The API's description: open only with a credential, as every route but the page and /healthz. */
const DOCS = ["/docs", "/openapi.json"];

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function call(c: Call, authorization?: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (c.type) headers["content-type"] = c.type;
  const ac = new AbortController();
  const res = await request(`${server.url}${c.path}`, {
    method: c.method,
    headers,
    body: c.body ?? null,
    signal: ac.signal,
  });
  if (String(res.headers["content-type"]).startsWith("text/event-stream")) {
    // An endless stream: the headers are the answer.
    res.body.on("error", () => {});
    ac.abort();
    return { status: res.statusCode, headers: res.headers, text: "" };
  }
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

function expectUnauthorized(a: Answer, c: Call, message: RegExp): void {
  expect(a.status, `${c.method} ${c.path}`).toBe(401);
  expect(a.headers["x-byteseek-revision"]).toMatch(/^[0-9]+$/);
  if (c.method === "HEAD") return;
  const body = JSON.parse(a.text) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("HTTP_UNAUTHORIZED");
  expect(body.error.message).toMatch(message);
}

const server = serveForAll((dir) => ({ KVSPACE: `${dir}/store`, BYTESEEK_TOKEN: TOKEN }));

describe("BYTESEEK_TOKEN", () => {
  it("answers 401 in the error shape on every API route, and on the API's description, without a token", async () => {
    for (const c of API) expectUnauthorized(await call(c), c, /needs a token/);
    for (const path of DOCS)
      expectUnauthorized(await call({ method: "GET", path }), { method: "GET", path }, /needs a token/);
    expect(await server.tree.get("/auth/a")).toBeUndefined();
  });

  it("answers 401 with a wrong token, another scheme, or the token without its scheme", async () => {
    for (const authorization of [`Bearer ${TOKEN}x`, "Bearer ", `Basic ${TOKEN}`, TOKEN, `Bearer x${TOKEN}`])
      for (const c of API) expectUnauthorized(await call(c, authorization), c, /not the server's token/);
    expect(await server.tree.get("/auth/a")).toBeUndefined();
  });

  it("lets every route through with the right bearer token", async () => {
    for (const c of API) {
      const a = await call(c, `Bearer ${TOKEN}`);
      if (c.ok === "any") expect([401, 500], `${c.method} ${c.path}`).not.toContain(a.status);
      else expect(a.status, `${c.method} ${c.path}: ${a.text.slice(0, 200)}`).toBe(c.ok);
    }
    expect(await server.tree.get("/auth/imported")).toMatchObject({ kind: "int64" });
    // The scheme is case-insensitive, as HTTP says.
    expect((await call({ method: "GET", path: "/v1/tree/auth/a" }, `bearer ${TOKEN}`)).status).toBe(200);
  });

  it("covers every route the OpenAPI document lists", async () => {
    const doc = JSON.parse(
      (await call({ method: "GET", path: "/openapi.json" }, `Bearer ${TOKEN}`)).text,
    ) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    // Compare shapes: OpenAPI writes `/v1/tree/{key}` and `/v1/tools/{name}/call`.
    const shape = (path: string) =>
      path
        .replace(/^\/v1\/(tree|watch|export|grep)\/[^?]*(\?.*)?$/, "/v1/$1/*")
        .replace(/^\/v1\/tools\/[^/]+\/call$/, "/v1/tools/:name/call")
        .replace(/^\/v1\/approvals\/[^/]+\/[^/]+$/, "/v1/approvals/:vid/:n")
        .replace(/^\/v1\/mcp\/[^/]+\/(review|accept|login|logout)$/, "/v1/mcp/:server/$1")
        .replace(/^\/v1\/tools\/[^/]+\/accept$/, "/v1/tools/:name/accept")
        .replace(/^\/v1\/tools\/[^/]+\/calls$/, "/v1/tools/:name/calls")
        .replace(/^\/v1\/agent\/runs\/[^/]+\/(resume|replay)$/, "/v1/agent/runs/:vid/$1")
        .replace(/^\/v1\/agent\/runs\/(?!.*\/)[^/]+$/, "/v1/agent/runs/:vid")
        .replace(/^\/v1\/agent\/runs\/[^/]+\/diff\/[^/]+$/, "/v1/agent/runs/:a/diff/:b");
    const covered = new Set([...API.map((c) => `${c.method} ${shape(c.path)}`), "GET /healthz"]);
    const missing = listed.filter((op) => {
      const [method, path] = op.split(" ") as [string, string];
      return !covered.has(`${method} ${shape(path)}`);
    });
    expect(listed.length).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });

  it("leaves /healthz open, with or without a token", async () => {
    for (const authorization of [undefined, "Bearer wrong", `Bearer ${TOKEN}`]) {
      const a = await call({ method: "GET", path: "/healthz" }, authorization);
      expect(a.status).toBe(200);
      expect(JSON.parse(a.text)).toMatchObject({ ok: true });
    }
  });

  it("leaves the web page and its assets open: they hold no data", async () => {
    for (const path of PAGE) {
      const a = await call({ method: "GET", path });
      expect(a.status, path).toBe(200);
      expect(String(a.headers["content-type"])).toMatch(path.endsWith(".css") ? /text\/css/ : /text\/html/);
    }
    for (const path of DOCS)
      expect((await call({ method: "GET", path }, `Bearer ${TOKEN}`)).status, path).toBe(200);
  });
});

/** A page address opened as byteseek serve prints it: the answer, not followed. */
async function open(path: string, cookie?: string): Promise<Answer> {
  const res = await request(`${server.url}${path}`, { headers: cookie === undefined ? {} : { cookie } });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** The `name=value` of a Set-Cookie header. */
const cookieOf = (a: Answer): string => String(a.headers["set-cookie"]).split(";")[0] as string;

describe("the page's cookie (?token= traded at the page's address)", () => {
  it("trades the right token for an HttpOnly, SameSite=Strict cookie and sends the page to its address without the token", async () => {
    const a = await open(`/?token=${encodeURIComponent(TOKEN)}`);
    expect(a.status).toBe(303);
    expect(a.headers.location).toBe("/");
    expect(a.headers["cache-control"]).toBe("no-store");
    expect(a.headers["referrer-policy"]).toBe("no-referrer");
    const set = String(a.headers["set-cookie"]);
    expect(set).toMatch(
      /^byteseek-[0-9a-f]{12}=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    expect(set).not.toContain(TOKEN);
    // Another page address keeps its own path and query, less the token.
    expect((await open(`/ui/a/b?x=1&token=${encodeURIComponent(TOKEN)}&y=2`)).headers.location).toBe(
      "/ui/a/b?x=1&y=2",
    );
  });

  it("lets the cookie through the API routes as the token is, reads and writes alike", async () => {
    const cookie = cookieOf(await open(`/?token=${encodeURIComponent(TOKEN)}`));
    for (const c of API.filter(
      (c) => c.method === "GET" && c.ok === 200 && !c.path.startsWith("/v1/watch"),
    )) {
      const res = await request(`${server.url}${c.path}`, { headers: { cookie } });
      expect(res.statusCode, c.path).toBe(200);
      await res.body.dump();
    }
    const put = await request(`${server.url}/v1/tree/auth/by-cookie`, {
      method: "PUT",
      headers: { cookie, "content-type": "application/json" },
      body: "1",
    });
    expect(put.statusCode).toBe(200);
    await put.body.dump();
  });

  it("gives no cookie for a wrong token, and takes no cookie it did not make (forged, tampered or another token's)", async () => {
    const wrong = await open("/?token=not-the-token");
    expect(wrong.status).toBe(303);
    expect(wrong.headers.location).toBe("/");
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    const good = cookieOf(await open(`/?token=${encodeURIComponent(TOKEN)}`));
    const [name, value] = good.split("=") as [string, string];
    const [session, mac] = value.split(".") as [string, string];
    const forged = [
      `${name}=${session}.${"A".repeat(43)}`,
      `${name}=${session}x.${mac}`,
      `${name}=${value}x`,
      `byteseek-000000000000=${value}`,
      `${name}=${TOKEN}`,
    ];
    for (const cookie of forged) {
      const res = await request(`${server.url}/v1/tree/auth/a`, { headers: { cookie } });
      expect(res.statusCode, cookie).toBe(401);
      await res.body.dump();
    }
  });
});
