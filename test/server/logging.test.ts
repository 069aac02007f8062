import { request } from "undici";
import { describe, expect, it } from "vitest";
import { captureLogger, eventually, serveForAll } from "./helpers.js";

const TOKEN = "tok-LOG-7d1e";
/** Strings sent in values, bodies, queries and headers that must never reach the log. */
const SECRETS = {
  value: "VALUE-secret-91b",
  body: "BODY-secret-4c2",
  query: "QUERY-secret-e07",
  wrongToken: "WRONGTOKEN-secret-55a",
  imported: "IMPORT-secret-3f3",
  txn: "TXN-secret-a19",
};

const logs = captureLogger();

async function call(
  method: "GET" | "PUT" | "POST",
  path: string,
  o: { body?: string; type?: string; headers?: Record<string, string>; auth?: string | null } = {},
) {
  const headers: Record<string, string> = { ...o.headers };
  if (o.auth !== null) headers.authorization = o.auth ?? `Bearer ${TOKEN}`;
  if (o.type) headers["content-type"] = o.type;
  const res = await request(`${server.url}${path}`, { method, headers, body: o.body ?? null });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const server = serveForAll((dir) => ({ KVSPACE: `${dir}/store`, BYTESEEK_TOKEN: TOKEN }), logs.logger);

describe("request logs", () => {
  it("write one line per request with its request id, status and duration", async () => {
    const before = logs.lines.length;
    const put = await call("PUT", "/v1/tree/log/given", {
      body: "1",
      type: "application/json",
      headers: { "x-request-id": "client-id-1" },
    });
    expect(put.headers["x-request-id"]).toBe("client-id-1");
    const get = await call("GET", "/v1/tree/log/given");
    const missing = await call("GET", "/v1/tree/log/absent");
    // A directory and a query: fastify's routes answer these, not the fast path beside them.
    const listed = await call("GET", "/v1/tree/log/");
    const history = await call("GET", "/v1/tree/log/given?history=1");
    await eventually(() => logs.lines.length >= before + 5, "five request lines");
    const lines = logs.lines.slice(before).filter((l) => l.msg === "request");
    expect(lines.map((l) => [l.reqId, l.method, l.url, l.status])).toEqual([
      ["client-id-1", "PUT", "/v1/tree/log/given", 200],
      [get.headers["x-request-id"], "GET", "/v1/tree/log/given", 200],
      [missing.headers["x-request-id"], "GET", "/v1/tree/log/absent", 404],
      [listed.headers["x-request-id"], "GET", "/v1/tree/log/", 200],
      [history.headers["x-request-id"], "GET", "/v1/tree/log/given", 200],
    ]);
    for (const l of lines) {
      expect(typeof l.ms).toBe("number");
      expect(Math.round((l.ms as number) * 1000) / 1000, "to the microsecond").toBe(l.ms);
    }
    // Generated ids are distinct; a given id that is not a plain token is replaced, not logged.
    expect(get.headers["x-request-id"]).not.toBe(missing.headers["x-request-id"]);
    const odd = await call("GET", "/healthz", { headers: { "x-request-id": "has space\tand tab" } });
    expect(odd.headers["x-request-id"]).toMatch(/^[A-Za-z0-9._:-]+$/);
  });

  it("carry the request id on every line written while answering, a watch's included", async () => {
    const before = logs.lines.length;
    const res = await request(`${server.url}/v1/watch/log/`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const watchId = res.headers["x-request-id"];
    res.body.on("error", () => {});
    res.body.destroy();
    await call("POST", "/v1/tree/log/value", { body: "1", type: "application/json" }); // 405
    await eventually(() => logs.lines.some((l) => l.msg === "watch ended"), "the watch's end line");
    const during = logs.lines.slice(before);
    expect(during.find((l) => l.msg === "watch ended")?.reqId).toBe(watchId);
    for (const l of during) expect(typeof l.reqId, JSON.stringify(l)).toBe("string");
  });

  it("never hold a value, a body, a query or a token", async () => {
    const before = logs.lines.length;
    await call("PUT", "/v1/tree/log/secret", {
      body: JSON.stringify({ kind: "char/utf8", value: SECRETS.value }),
      type: "application/json",
    });
    await call("GET", "/v1/tree/log/secret");
    // A refused body, a wrong token, a query, an import and a txn, each carrying a secret.
    await call("PUT", "/v1/tree/log/bad", { body: `{"${SECRETS.body}": `, type: "application/json" });
    await call("PUT", "/v1/tree/log/ro", {
      body: JSON.stringify({ value: SECRETS.body, kind: "nope" }),
      type: "application/json",
    });
    await call("GET", "/v1/tree/log/secret", { auth: `Bearer ${SECRETS.wrongToken}` });
    await call("GET", `/v1/tree/log/?after=${SECRETS.query}`);
    await call("POST", "/v1/import", {
      body: `${JSON.stringify({ key: "/log/imp", kind: "char/utf8", value: SECRETS.imported })}\n{bad`,
      type: "application/x-ndjson",
    });
    await call("POST", "/v1/txn", {
      body: JSON.stringify({
        compare: [{ key: "/log/secret", target: "value", op: "==", value: SECRETS.txn }],
        success: [{ op: "set", key: "/log/t", value: { kind: "char/utf8", value: SECRETS.txn } }],
        failure: [],
      }),
      type: "application/json",
    });
    // A 412 answers the current node (with its value) to the client, not to the log.
    await call("PUT", "/v1/tree/log/secret", {
      body: JSON.stringify("other"),
      type: "application/json",
      headers: { "if-match": '"99"' },
    });
    await eventually(() => logs.lines.length >= before + 9, "a line per request");
    const text = logs.text();
    for (const secret of [...Object.values(SECRETS), TOKEN]) expect(text).not.toContain(secret);
    expect(logs.lines.slice(before).filter((l) => l.msg === "request")).toHaveLength(9);
  });
});
