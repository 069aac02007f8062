/**
 * Bounded resources and bad bodies (issue 15, items 6 and 7), on the server as `byteseek serve`
 * builds it, with its bounds set low through the environment: a body that never finishes is cut
 * with 408; watches beyond the limit get 503 with Retry-After; a listing of large values answers
 * previews and pages by size; an import over the body limit answers 413 (not a reset connection)
 * and imports nothing; import leaves read-only keys alone unless forced; odd asset names are 404s.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { LIST_BYTES, LIST_PREVIEW_OVER, PREVIEW_CHARS } from "../../server/listing.js";
import { str } from "../../tree/value.js";
import { captureLogger, eventually, rawRequest, serveForAll } from "./helpers.js";

const logs = captureLogger();

const BODY_TIMEOUT_MS = 300;
const MAX_WATCHES = 3;
const BODY_LIMIT = 64 * 1024;

const server = serveForAll(
  (dir) => ({
    KVSPACE: `${dir}/store`,
    BYTESEEK_SYNC: "never",
    BYTESEEK_WORKSPACE: dir,
    // about bounds, not the credential: --no-auth
    BYTESEEK_TOKEN: "",
    BYTESEEK_BODY_TIMEOUT: String(BODY_TIMEOUT_MS),
    BYTESEEK_MAX_WATCHES: String(MAX_WATCHES),
    BYTESEEK_BODY_LIMIT: String(BODY_LIMIT),
  }),
  logs.logger,
);
const portOf = () => Number(new URL(server.url).port);

/** Sends `head` and `start` of a body on a raw socket, never the rest; answers what came back once the server closed it. */
function stall(head: string, start: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(portOf(), "127.0.0.1", () => socket.write(head + start));
    let text = "";
    socket.on("data", (c) => {
      text += c.toString();
    });
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
    // A liveness bound, not a timed assertion: without the cut the socket stays open forever.
    setTimeout(() => {
      socket.destroy();
      resolve(`${text}(still open)`);
    }, 10_000);
  });
}

describe("a body that never finishes", () => {
  it("is cut with 408 and its socket closed, on the fast path, fastify's routes and a chunked body; nothing is written", async () => {
    const host = `Host: 127.0.0.1:${portOf()}\r\nContent-Type: application/json\r\n`;
    for (const [head, start] of [
      [`PUT /v1/tree/slow/fast HTTP/1.1\r\n${host}Content-Length: 10\r\n\r\n`, '"12'],
      [`POST /v1/tree/slow/list/ HTTP/1.1\r\n${host}Content-Length: 10\r\n\r\n`, '"12'],
      [`POST /v1/txn HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n`, "2\r\n{}\r\n"],
    ] as const) {
      const answer = await stall(head, start);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toContain("HTTP_REQUEST_TIMEOUT");
      expect(answer).toContain("BYTESEEK_BODY_TIMEOUT");
      expect(answer).not.toContain("(still open)");
    }
    expect(await server.tree.get("/slow/fast")).toBeUndefined();
    expect(await server.tree.get("/slow/list/0")).toBeUndefined();
    // Each has its log line.
    await eventually(
      () => logs.lines.filter((l) => l.msg === "request" && l.status === 408).length === 3,
      "three 408 log lines",
    );
  });

  it("does not cut a request whose body arrived, however long it then takes to answer", async () => {
    const res = await rawRequest(server.url, {
      method: "POST",
      path: "/v1/tools/shell.run/call",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ args: { command: `sleep ${(BODY_TIMEOUT_MS * 3) / 1000}; echo done` } }),
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text), res.text).toMatchObject({ kind: "ok" });
  });
});

/** A watch held open until `close`. */
function openWatch(): Promise<{ res: IncomingMessage; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: portOf(), path: "/v1/watch/w/" }, (res) => {
      if (res.statusCode !== 200) {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => reject(Object.assign(new Error(text), { res })));
        return;
      }
      res.once("data", () => resolve({ res, close: () => req.destroy() }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("watches", () => {
  it(`are bounded (BYTESEEK_MAX_WATCHES=${MAX_WATCHES}): one more answers 503 with Retry-After, and a closed one frees its place`, async () => {
    const open = [];
    for (let i = 0; i < MAX_WATCHES; i++) open.push(await openWatch());
    const refused = await rawRequest(server.url, { path: "/v1/watch/w/" });
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("5");
    expect(JSON.parse(refused.text).error.code).toBe("HTTP_TOO_MANY_WATCHES");
    open.pop()!.close();
    let again: Awaited<ReturnType<typeof openWatch>> | undefined;
    await eventually(async () => {
      again = await openWatch().catch(() => undefined);
      return again !== undefined;
    }, "a watch after one closed");
    for (const w of [...open, again!]) w.close();
  });
});

describe("a listing", () => {
  it("carries a value over 64 KiB as a preview with its size, and the whole value stays a GET away", async () => {
    const big = "x".repeat(1024 * 1024 - 16);
    for (let i = 0; i < 12; i++) await server.tree.set(`/big/${i}`, str(`${i}${big}`));
    const res = await rawRequest(server.url, { path: "/v1/tree/big/" });
    expect(res.status).toBe(200);
    expect(res.text.length).toBeLessThan(12 * (PREVIEW_CHARS + 400));
    const page = JSON.parse(res.text) as { children: Array<Record<string, unknown>> };
    expect(page.children).toHaveLength(12);
    for (const c of page.children) {
      expect(c.value).toBeUndefined();
      expect(c.size).toBe(1024 * 1024 - 16 + String(c.name).length);
      expect(c.preview).toBe(`${c.name}${big}`.slice(0, PREVIEW_CHARS));
    }
    const one = await rawRequest(server.url, { path: "/v1/tree/big/3" });
    expect(JSON.parse(one.text).value).toBe(`3${big}`);
    // A recursive listing the same.
    const deep = JSON.parse((await rawRequest(server.url, { path: "/v1/tree/?recursive=1" })).text) as {
      children: Array<Record<string, unknown>>;
    };
    expect(
      deep.children.filter((c) => String(c.name).startsWith("big/") && c.preview !== undefined),
    ).toHaveLength(12);
  });

  it("stops at about 4 MiB of values and answers next for the rest, so every child is reached", async () => {
    const mid = "y".repeat(LIST_PREVIEW_OVER - 100);
    const count = Math.ceil((LIST_BYTES * 2.5) / mid.length);
    for (let i = 0; i < count; i++) await server.tree.set(`/mid/${i}`, str(mid));
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await rawRequest(server.url, {
        path: `/v1/tree/mid/${after === undefined ? "" : `?after=${encodeURIComponent(after)}`}`,
      });
      expect(res.status).toBe(200);
      expect(res.text.length).toBeLessThan(LIST_BYTES + 2 * LIST_PREVIEW_OVER);
      const page = JSON.parse(res.text) as {
        children: Array<{ name: string; value: string }>;
        next?: string;
      };
      for (const c of page.children) {
        expect(c.value).toBe(mid);
        seen.push(c.name);
      }
      pages++;
      if (page.next === undefined) break;
      after = page.next;
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => String(i)));
  });

  it("through the tree.list tool gives each large value as a short preview", async () => {
    const res = await rawRequest(server.url, {
      method: "POST",
      path: "/v1/tools/tree.list/call",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ args: { key: "/big/" } }),
    });
    const result = JSON.parse(res.text) as { kind: string; text: string };
    expect(result.kind).toBe("ok");
    const lines = result.text.split("\n").slice(1);
    expect(lines).toHaveLength(12);
    for (const l of lines) expect(l.length).toBeLessThan(140);
    expect(lines[0]).toMatch(/^0\tchar\/utf8\t0x{119}…$/);
  });
});

describe("an import", () => {
  const ndjson = { "content-type": "application/x-ndjson" };

  it("over the body limit answers 413 with its log line, and imports nothing", async () => {
    const lines = [];
    for (let i = 0; i < 200; i++)
      lines.push(JSON.stringify({ key: `/huge/${i}`, kind: "char/utf8", value: "z".repeat(1000) }));
    const res = await rawRequest(server.url, {
      method: "POST",
      path: "/v1/import",
      headers: ndjson,
      body: `${lines.join("\n")}\n`,
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text).error.code).toBe("HTTP_BODY_TOO_LARGE");
    expect(await server.tree.get("/huge/0")).toBeUndefined();
    await eventually(
      () => logs.lines.some((l) => l.msg === "request" && l.url === "/v1/import" && l.status === 413),
      "the 413's log line",
    );
  });

  it("refuses to overwrite a read-only key (the policy) without ?force=1, naming the line, and imports nothing", async () => {
    const policy = await server.tree.get("/byteseek/policy");
    expect(policy?.ro).toBe(true);
    const body = `${JSON.stringify({ key: "/ro/other", kind: "int64", value: 1 })}\n${JSON.stringify({ key: "/byteseek/policy", kind: "json", value: { deny: [] } })}\n`;
    const res = await rawRequest(server.url, { method: "POST", path: "/v1/import", headers: ndjson, body });
    expect(res.status).toBe(409);
    const error = JSON.parse(res.text).error;
    expect(error).toMatchObject({ code: "TREE_READ_ONLY", line: 2, key: "/byteseek/policy" });
    expect(error.message).toContain("force=1");
    expect(await server.tree.get("/ro/other")).toBeUndefined();
    expect((await server.tree.get("/byteseek/policy"))?.version).toBe(policy?.version);
  });

  it("with ?force=1 overwrites it and keeps its read-only flag; a line's own ro is written", async () => {
    await server.tree.set("/ro/kept", str("before"), { ro: true });
    const body = `${JSON.stringify({ key: "/ro/kept", kind: "char/utf8", value: "after" })}\n${JSON.stringify({ key: "/ro/new", kind: "char/utf8", value: "n", ro: true })}\n`;
    const res = await rawRequest(server.url, {
      method: "POST",
      path: "/v1/import?force=1",
      headers: ndjson,
      body,
    });
    expect(res.status).toBe(200);
    const kept = await server.tree.get("/ro/kept");
    expect(kept).toMatchObject({ ro: true, value: { kind: "char/utf8", value: "after" } });
    expect((await server.tree.get("/ro/new"))?.ro).toBe(true);
  });
});

describe("an odd name under /assets/", () => {
  it("answers 404, never a 500 or a file outside the assets", async () => {
    for (const path of [
      "/assets/..%2f..%2fpackage.json",
      "/assets/%2e%2e/%2e%2e/package.json",
      "/assets/%2E%2E%2Fstatic%2Findex.html",
      "/assets/a%00b.css",
      "/assets/.hidden",
      "/assets/",
      "/assets//etc/passwd",
      "/assets/style.css%00.js",
    ]) {
      const res = await rawRequest(server.url, { path });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    expect((await rawRequest(server.url, { path: "/assets/style.css" })).status).toBe(200);
  });
});
