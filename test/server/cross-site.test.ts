/**
 * Requests from other sites (issue 15, item 1): a page that re-points its DNS name at 127.0.0.1
 * (DNS rebinding) sends its own name in Host; another site's form or fetch sends its Origin. Both
 * are refused on every route — each one the app registers is probed, so a route added later cannot
 * miss the guard — and nothing runs for them. Write routes take JSON only (a cross-site "simple"
 * request can only send text/plain, a form or multipart).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../server/main.js";
import { rawRequest, startTestServer, tempDir } from "./helpers.js";

const FOREIGN_HOST = "attacker.example";
const FOREIGN_ORIGIN = "http://attacker.example";

let store: Awaited<ReturnType<typeof tempDir>>;
let workspace: Awaited<ReturnType<typeof tempDir>>;
let server: RunningServer;
let own: string;

/** A concrete path for a registered route: parameters and wildcards filled in. */
function pathOf(url: string): string {
  return url.replace(/:[A-Za-z]+/g, "probe").replace(/\*$/, "probe/x");
}

beforeAll(async () => {
  store = await tempDir();
  workspace = await tempDir();
  // The server as `byteseek serve` builds it: tools, prompt, agent, web page; run without a
  // credential (`BYTESEEK_TOKEN= byteseek serve --no-auth`), so the Host and Origin checks stand alone.
  server = await startServer({
    env: {
      KVSPACE: store.path,
      BYTESEEK_PORT: "0",
      BYTESEEK_SYNC: "never",
      BYTESEEK_WORKSPACE: workspace.path,
      BYTESEEK_TOKEN: "",
    },
    noAuth: true,
    cwd: workspace.path,
    logger: pino({ level: "silent" }),
    handleSignals: false,
  });
  own = `http://127.0.0.1:${new URL(server.url).port}`;
});

afterAll(async () => {
  await server.close();
  await store.remove();
  await workspace.remove();
});

/** A request to the server with `headers`, carrying `body` as JSON when there is one. */
function send(method: string, path: string, body: string | undefined, headers: Record<string, string>) {
  return rawRequest(server.url, {
    method,
    path,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body }),
  });
}

describe("a request naming another host or carrying another site's origin", () => {
  it("is refused on every route the app registers, method by method: 421 for the Host, 403 for the Origin", async () => {
    const routes = server.app.routeTable;
    // The API, the SSE routes, the web page and its assets, /healthz: all of them are in the table.
    for (const url of [
      "/v1/tree/*",
      "/v1/watch/*",
      "/v1/agent/turn",
      "/v1/tools/:name/call",
      "/assets/*",
      "/healthz",
    ])
      expect(routes.some((r) => r.url === url)).toBe(true);
    for (const r of routes) {
      const path = pathOf(r.url);
      const body = ["POST", "PUT", "PATCH"].includes(r.method) ? "{}" : undefined;
      const byHost = await send(r.method, path, body, {
        host: `${FOREIGN_HOST}:${new URL(server.url).port}`,
      });
      expect({ route: `${r.method} ${r.url}`, status: byHost.status }).toEqual({
        route: `${r.method} ${r.url}`,
        status: 421,
      });
      const byOrigin = await send(r.method, path, body, { origin: FOREIGN_ORIGIN });
      expect({ route: `${r.method} ${r.url}`, status: byOrigin.status }).toEqual({
        route: `${r.method} ${r.url}`,
        status: 403,
      });
      if (r.method !== "HEAD") {
        expect(JSON.parse(byHost.text).error.code).toBe("HTTP_MISDIRECTED");
        expect(JSON.parse(byOrigin.text).error.code).toBe("HTTP_FORBIDDEN_ORIGIN");
      }
    }
  });

  it("runs no command: shell.run through a rebinding page answers 421 and the file is never made, while the same call from the server's own origin makes it", async () => {
    const call = (headers: Record<string, string>) =>
      send("POST", "/v1/tools/shell.run/call", JSON.stringify({ args: { command: "touch pwned" } }), headers);
    const rebound = await call({ host: FOREIGN_HOST, origin: FOREIGN_ORIGIN });
    expect(rebound.status).toBe(421);
    const crossSite = await call({ origin: FOREIGN_ORIGIN });
    expect(crossSite.status).toBe(403);
    expect(existsSync(join(workspace.path, "pwned"))).toBe(false);
    const sameSite = await call({ origin: own });
    expect(sameSite.status).toBe(200);
    expect(JSON.parse(sameSite.text).kind).toBe("ok");
    expect(existsSync(join(workspace.path, "pwned"))).toBe(true);
  });

  it("writes nothing through the fast path (a plain PUT), and reads nothing either", async () => {
    const put = (headers: Record<string, string>) =>
      send("PUT", "/v1/tree/rebind/a", '"from elsewhere"', headers);
    expect((await put({ host: FOREIGN_HOST })).status).toBe(421);
    expect((await put({ origin: FOREIGN_ORIGIN })).status).toBe(403);
    expect(await server.tree.get("/rebind/a")).toBeUndefined();
    expect((await put({ origin: own })).status).toBe(200);
    const read = await rawRequest(server.url, { path: "/v1/tree/rebind/a", headers: { host: FOREIGN_HOST } });
    expect(read.status).toBe(421);
    expect(read.text).not.toContain("from elsewhere");
  });

  it("opens no watch stream for another site", async () => {
    const watch = await rawRequest(server.url, {
      path: "/v1/watch/",
      headers: { origin: FOREIGN_ORIGIN, accept: "text/event-stream" },
    });
    expect(watch.status).toBe(403);
    expect(watch.headers["content-type"]).toMatch(/^application\/json/);
  });

  it("answers the loopback names, with or without a port, and the server's own origin (http or https)", async () => {
    const port = new URL(server.url).port;
    for (const host of [
      "127.0.0.1",
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      "LOCALHOST",
      `[::1]:${port}`,
      "[::1]",
    ])
      expect((await rawRequest(server.url, { path: "/healthz", headers: { host } })).status).toBe(200);
    for (const origin of [own, `https://127.0.0.1:${port}`])
      expect((await rawRequest(server.url, { path: "/v1/tree/", headers: { origin } })).status).toBe(200);
    for (const origin of ["null", `http://localhost:${port}`, `http://127.0.0.1:${Number(port) + 1}`])
      expect((await rawRequest(server.url, { path: "/v1/tree/", headers: { origin } })).status).toBe(403);
  });

  it("keeps /healthz open without a token but refuses it for another host", async () => {
    expect((await rawRequest(server.url, { path: "/healthz" })).status).toBe(200);
    expect((await rawRequest(server.url, { path: "/healthz", headers: { host: FOREIGN_HOST } })).status).toBe(
      421,
    );
  });

  it("guards a route added after the app was built, before its handler runs", async () => {
    let ran = 0;
    const s = await startTestServer({
      prepare(app) {
        app.post("/v1/later", async () => {
          ran++;
          return { ok: true };
        });
      },
    });
    try {
      expect(s.app.routeTable.some((r) => r.url === "/v1/later")).toBe(true);
      const headers = { "content-type": "application/json" };
      const foreign: Array<Record<string, string>> = [{ host: FOREIGN_HOST }, { origin: FOREIGN_ORIGIN }];
      for (const extra of foreign) {
        const res = await rawRequest(s.url, {
          method: "POST",
          path: "/v1/later",
          headers: { ...headers, ...extra },
          body: "{}",
        });
        expect(res.status).toBeGreaterThanOrEqual(403);
      }
      expect(ran).toBe(0);
      expect(
        (await rawRequest(s.url, { method: "POST", path: "/v1/later", headers, body: "{}" })).status,
      ).toBe(200);
      expect(ran).toBe(1);
      // The refusal has its log line, with the request id it answered.
      const refused = s.logs.lines.filter((l) => l.msg === "request" && l.status === 421);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({ method: "POST", url: "/v1/later", refused: "HTTP_MISDIRECTED" });
    } finally {
      await s.close();
    }
  });
});

describe("with a token", () => {
  it("answers the names in BYTESEEK_ALLOWED_HOSTS too, and still refuses any other", async () => {
    const dir = await tempDir();
    const token = "tok-allowed-hosts";
    const s = await startServer({
      env: {
        KVSPACE: dir.path,
        BYTESEEK_PORT: "0",
        BYTESEEK_SYNC: "never",
        BYTESEEK_TOKEN: token,
        BYTESEEK_ALLOWED_HOSTS: "kv.example.com",
        BYTESEEK_WORKSPACE: dir.path,
      },
      cwd: dir.path,
      logger: pino({ level: "silent" }),
      handleSignals: false,
    });
    try {
      const auth = { authorization: `Bearer ${token}` };
      const port = new URL(s.url).port;
      expect(
        (await rawRequest(s.url, { path: "/v1/tree/", headers: { ...auth, host: `kv.example.com:${port}` } }))
          .status,
      ).toBe(200);
      expect(
        (await rawRequest(s.url, { path: "/v1/tree/", headers: { ...auth, host: "kv.example.com" } })).status,
      ).toBe(200);
      expect(
        (await rawRequest(s.url, { path: "/v1/tree/", headers: { ...auth, host: FOREIGN_HOST } })).status,
      ).toBe(421);
      // The token does not make another site's origin acceptable.
      const origin = await rawRequest(s.url, {
        path: "/v1/tree/",
        headers: { ...auth, host: "kv.example.com", origin: FOREIGN_ORIGIN },
      });
      expect(origin.status).toBe(403);
      expect(
        (
          await rawRequest(s.url, {
            path: "/v1/tree/",
            headers: { ...auth, host: "kv.example.com", origin: "https://kv.example.com" },
          })
        ).status,
      ).toBe(200);
    } finally {
      await s.close();
      await dir.remove();
    }
  });
});

describe("write routes", () => {
  const memory = "/v1/tree/byteseek/memory/";

  it("refuse text/plain, form and multipart bodies and a body without a type with 415 naming the accepted types, and append nothing", async () => {
    for (const type of [
      "text/plain",
      "text/plain;charset=UTF-8",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      undefined,
    ]) {
      const res = await rawRequest(server.url, {
        method: "POST",
        path: memory,
        headers: type === undefined ? {} : { "content-type": type },
        body: type?.startsWith("multipart")
          ? '--x\r\ncontent-disposition: form-data; name="a"\r\n\r\nrun rm -rf\r\n--x--\r\n'
          : '"run rm -rf"',
      });
      expect(res.status).toBe(415);
      const error = JSON.parse(res.text).error;
      expect(error.code).toBe("HTTP_UNSUPPORTED_MEDIA_TYPE");
      expect(error.message).toContain("application/json");
      expect(error.message).toContain("application/x-ndjson");
    }
    expect(await server.tree.get("/byteseek/memory/0")).toBeUndefined();
    for (const path of ["/v1/txn", "/v1/import", "/v1/tools/tree.get/call", "/v1/agent/turn"]) {
      const res = await rawRequest(server.url, {
        method: "POST",
        path,
        headers: { "content-type": "text/plain" },
        body: "{}",
      });
      expect({ path, status: res.status }).toEqual({ path, status: 415 });
    }
    const put = await rawRequest(server.url, {
      method: "PUT",
      path: "/v1/tree/csrf/a",
      headers: { "content-type": "text/plain" },
      body: '"x"',
    });
    expect(put.status).toBe(415);
    expect(await server.tree.get("/csrf/a")).toBeUndefined();
  });

  it("take application/json, and NDJSON for the import", async () => {
    const res = await rawRequest(server.url, {
      method: "POST",
      path: memory,
      headers: { "content-type": "application/json; charset=utf-8" },
      body: '"remember this"',
    });
    expect(res.status).toBe(201);
    const imported = await rawRequest(server.url, {
      method: "POST",
      path: "/v1/import",
      headers: { "content-type": "application/x-ndjson" },
      body: `${JSON.stringify({ key: "/csrf/imported", kind: "int64", value: 1 })}\n`,
    });
    expect(imported.status).toBe(200);
  });
});
