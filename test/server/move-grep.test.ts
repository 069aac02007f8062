/**
 * `POST /v1/move`, `POST /v1/copy` and `GET /v1/grep/<prefix/>` on a real server: the statuses of
 * the page's contract (409 exists, 403 read-only or hidden), one revision a move, txn operations,
 * and a search that pages, masks registry secrets and leaves the server answering meanwhile.
 */
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, str } from "../../tree/value.js";
import { startTestServer, type TestServer } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

// biome-ignore lint/suspicious/noExplicitAny: test bodies are read field by field
type Body = any;

async function send(
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Body }> {
  const res = await request(`${server.url}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

describe("POST /v1/move and /v1/copy", () => {
  it("moves a directory in one revision and answers {revision, keys}", async () => {
    await server.tree.set("/mv/a", str("a"));
    await server.tree.set("/mv/b/c", str("c"));
    const before = server.tree.revision();
    const r = await send("POST", "/v1/move", { from: "/mv/", to: "/moved/" });
    expect(r).toEqual({ status: 200, body: { revision: before + 1, keys: 4 } });
    expect(await server.tree.get("/mv/")).toBeUndefined();
    expect((await server.tree.get("/moved/b/c"))?.version).toBe(1);
    const c = await send("POST", "/v1/copy", { from: "/moved/", to: "/copied/" });
    expect(c.body.keys).toBe(4);
    expect(await server.tree.get("/moved/b/c")).toBeDefined();
  });

  it("answers 409 TREE_EXISTS for an existing target unless overwrite, 403 for read-only and hidden keys, 400 into itself", async () => {
    await server.tree.set("/s/x", str("x"));
    await server.tree.set("/t/x", str("old"));
    const exists = await send("POST", "/v1/copy", { from: "/s/", to: "/t/" });
    expect(exists.status).toBe(409);
    expect(exists.body.error.code).toBe("TREE_EXISTS");
    expect((await send("POST", "/v1/copy", { from: "/s/", to: "/t/", overwrite: true })).status).toBe(200);
    await server.tree.set("/ro/k", str("k"), { ro: true });
    const ro = await send("POST", "/v1/move", { from: "/ro/", to: "/ro2/" });
    expect([ro.status, ro.body.error.code]).toEqual([403, "TREE_READ_ONLY"]);
    expect((await send("POST", "/v1/move", { from: "/ro/", to: "/ro2/", force: true })).status).toBe(200);
    const hidden = await send("POST", "/v1/move", { from: "/s/x", to: "/s/‥x" });
    expect([hidden.status, hidden.body.error.code]).toEqual([403, "TREE_HIDDEN"]);
    const inside = await send("POST", "/v1/move", { from: "/s/", to: "/s/deeper/" });
    expect([inside.status, inside.body.error.code]).toEqual([400, "TREE_INVALID_KEY"]);
    expect((await send("POST", "/v1/move", { from: "/s/", to: "/u/", extra: 1 })).status).toBe(400);
    expect((await send("POST", "/v1/move", { from: "/absent/", to: "/u/" })).status).toBe(404);
  });

  it("runs move and copy as operations of POST /v1/txn, answering keys in their results", async () => {
    await server.tree.set("/tx/a", str("a"));
    const r = await send("POST", "/v1/txn", {
      success: [
        { op: "copy", key: "/tx/a", to: "/tx/b" },
        { op: "move", key: "/tx/", to: "/tx2/" },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([
      { key: "/tx/b", rev: r.body.rev, version: 1, keys: 1 },
      { key: "/tx2/", rev: r.body.rev, version: 1, keys: 3 },
    ]);
  });
});

describe("GET /v1/grep/<prefix/>", () => {
  it("answers matching keys and lines, pages with next, and refuses a bad pattern", async () => {
    await server.tree.set("/gr/one", str("alpha\nbeta needle"));
    await server.tree.set("/gr/needle", str("x"));
    await server.tree.set("/gr/two/three", json({ say: "needle" }));
    const all = await send("GET", "/v1/grep/gr/?pattern=needle");
    expect(all.status).toBe(200);
    expect(all.body.matches).toEqual([
      { key: "/gr/needle", preview: "/gr/needle" },
      { key: "/gr/one", line: 2, preview: "beta needle" },
      { key: "/gr/two/three", line: 1, preview: '{"say":"needle"}' },
    ]);
    expect(all.body.next).toBeUndefined();
    const first = await send("GET", "/v1/grep/gr/?pattern=needle&limit=1&keys=0");
    expect(first.body.matches).toEqual([{ key: "/gr/one", line: 2, preview: "beta needle" }]);
    const rest = await send(
      "GET",
      `/v1/grep/gr/?pattern=needle&keys=0&after=${encodeURIComponent(first.body.next)}`,
    );
    expect(rest.body.matches.map((m: { key: string }) => m.key)).toEqual(["/gr/two/three"]);
    const re = await send("GET", "/v1/grep/gr/?pattern=%5Ebeta&regex=1");
    expect(re.body.matches).toHaveLength(1);
    expect((await send("GET", "/v1/grep/gr/?pattern=(&regex=1")).status).toBe(400);
    expect((await send("GET", "/v1/grep/gr/")).status).toBe(400);
  });

  it("searches MCP registry entries with their secret fields masked", async () => {
    await server.tree.set(
      "/byteseek/mcp/gh",
      json({ url: "https://mcp.example/", headers: { Authorization: "Bearer sekrit-token" } }),
      { unchecked: true },
    );
    const r = await send("GET", "/v1/grep/byteseek/mcp/?pattern=sekrit");
    expect(r.body.matches).toEqual([]);
    const shown = await send("GET", "/v1/grep/byteseek/mcp/?pattern=Authorization");
    expect(shown.body.matches[0].preview).toContain('"Authorization":"***"');
  });

  it("answers other requests while it searches many values", async () => {
    await server.tree.import(
      Array.from({ length: 4000 }, (_v, i) => ({
        key: `/big/${i % 20}/${i}`,
        kind: "char/utf8" as const,
        value: `value ${i}`,
      })),
    );
    const order: string[] = [];
    const search = send("GET", "/v1/grep/big/?pattern=absent").then((r) => {
      order.push("grep");
      return r;
    });
    const health = send("GET", "/healthz").then(() => order.push("health"));
    const [r] = await Promise.all([search, health]);
    expect(r.body.matches).toEqual([]);
    expect(r.body.scanned.keys).toBe(4020);
    expect(order).toEqual(["health", "grep"]);
  });
});
