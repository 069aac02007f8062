import { describe, expect, it } from "vitest";
import { mapError } from "../../server/errors.js";
import { MAX_JSON_DEPTH } from "../../server/exact-json.js";
import { TreeError } from "../../tree/errors.js";
import { exactValue } from "../../tree/exact.js";
import { rawRequest, serveForAll } from "./helpers.js";

const JSON_TYPE = { "content-type": "application/json" };

// about numbers, not the credential: --no-auth
const server = serveForAll((dir) => ({
  KVSPACE: dir,
  BYTESEEK_SYNC: "never",
  BYTESEEK_WORKSPACE: dir,
  BYTESEEK_TOKEN: "",
}));

function put(path: string, body: string, headers: Record<string, string> = {}) {
  return rawRequest(server.url, { method: "PUT", path, headers: { ...JSON_TYPE, ...headers }, body });
}

async function get(key: string): Promise<{ kind: string; value: unknown } | undefined> {
  const res = await rawRequest(server.url, { path: `/v1/tree${key}` });
  return res.status === 200 ? (JSON.parse(res.text) as { kind: string; value: unknown }) : undefined;
}

describe("an integer beyond 2^53 in a body", () => {
  it("is stored exactly as int64 by a plain PUT (the fast path) and by fastify's routes", async () => {
    expect((await put("/v1/tree/p/fast", "9007199254740993")).status).toBe(200);
    expect(await get("/p/fast")).toMatchObject({ kind: "int64", value: "9007199254740993" });
    // If-None-Match sends it to fastify's route.
    expect((await put("/v1/tree/p/slow", "-9223372036854775808", { "if-none-match": "*" })).status).toBe(200);
    expect(await get("/p/slow")).toMatchObject({ kind: "int64", value: "-9223372036854775808" });
    const appended = await rawRequest(server.url, {
      method: "POST",
      path: "/v1/tree/p/list/",
      headers: JSON_TYPE,
      body: "9223372036854775807",
    });
    expect(appended.status).toBe(201);
    expect(await get("/p/list/0")).toMatchObject({ kind: "int64", value: "9223372036854775807" });
    // The typed form takes it as a number too.
    expect((await put("/v1/tree/p/typed", '{"kind":"int64","value":12345678901234567890}')).status).toBe(400);
    expect((await put("/v1/tree/p/typed", '{"kind":"int64","value":1234567890123456789}')).status).toBe(200);
    expect(await get("/p/typed")).toMatchObject({ kind: "int64", value: "1234567890123456789" });
  });

  it("is refused with 400 when out of int64's range, never clamped, pointing to float64 or a string", async () => {
    for (const [path, text] of [
      ["/v1/tree/p/under", "-9223372036854775809"],
      ["/v1/tree/p/over", "9223372036854775808"],
      ["/v1/tree/p/huge", "123456789012345678901234567890"],
    ] as const) {
      for (const headers of [{}, { "if-none-match": "*" }] as Array<Record<string, string>>) {
        const res = await put(path, text, headers);
        expect(res.status).toBe(400);
        const error = JSON.parse(res.text).error;
        expect(error.code).toBe("HTTP_INEXACT_NUMBER");
        expect(error.message).toContain('{"kind":"float64"');
        expect(error.message).toContain("string");
      }
      expect(await get(path.slice("/v1/tree".length))).toBeUndefined();
    }
  });

  it("is refused with 400 inside a json value (a double would answer it rounded), and nothing is stored", async () => {
    for (const body of [
      '{"a":9007199254740993}',
      '[1,{"b":[9007199254740992]}]',
      '{"kind":"json","value":{"a":18446744073709551615}}',
    ]) {
      const res = await put("/v1/tree/p/json", body);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).error.code).toBe("HTTP_INEXACT_NUMBER");
    }
    expect(await get("/p/json")).toBeUndefined();
    // Safe integers and floats in json round-trip as they were sent.
    expect(
      (await put("/v1/tree/p/json", '{"a":9007199254740991,"b":0.30000000000000004,"c":[-1e300]}')).status,
    ).toBe(200);
    expect((await get("/p/json"))?.value).toEqual({
      a: 9007199254740991,
      b: 0.30000000000000004,
      c: [-1e300],
    });
  });

  it("written with a fraction or exponent beyond 2^53 is refused rather than rounded into an int64", async () => {
    const res = await put("/v1/tree/p/exp", "9.007199254740993e15");
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error.code).toBe("HTTP_INEXACT_NUMBER");
    expect((await put("/v1/tree/p/exp", '{"kind":"float64","value":9.007199254740993e15}')).status).toBe(200);
    expect(await get("/p/exp")).toMatchObject({ kind: "float64", value: 9007199254740992 });
  });

  it("is kept exactly by a txn, and one out of range fails the whole txn", async () => {
    const txn = (value: string) =>
      rawRequest(server.url, {
        method: "POST",
        path: "/v1/txn",
        headers: JSON_TYPE,
        body: `{"success":[{"op":"set","key":"/p/txn/a","value":1},{"op":"set","key":"/p/txn/b","value":${value}}]}`,
      });
    const bad = await txn("-9223372036854775809");
    expect(bad.status).toBe(400);
    expect(await get("/p/txn/a")).toBeUndefined();
    expect((await txn("9007199254740993")).status).toBe(200);
    expect(await get("/p/txn/b")).toMatchObject({ kind: "int64", value: "9007199254740993" });
  });

  it("is kept exactly by an import; a line out of range or inexact in json imports nothing and names the line", async () => {
    const line = (o: string) => `${o}\n`;
    const importing = (body: string) =>
      rawRequest(server.url, {
        method: "POST",
        path: "/v1/import",
        headers: { "content-type": "application/x-ndjson" },
        body,
      });
    for (const bad of [
      '{"key":"/p/imp/b","kind":"int64","value":-9223372036854775809}',
      '{"key":"/p/imp/b","kind":"json","value":{"a":9007199254740993}}',
    ]) {
      const res = await importing(line('{"key":"/p/imp/a","kind":"int64","value":1}') + line(bad));
      expect(res.status).toBe(400);
      expect(JSON.parse(res.text).error).toMatchObject({ code: "TREE_IMPORT_FAILED", line: 2 });
      expect(await get("/p/imp/a")).toBeUndefined();
    }
    const ok = await importing(line('{"key":"/p/imp/c","kind":"int64","value":9007199254740993}'));
    expect(ok.status).toBe(200);
    expect(await get("/p/imp/c")).toMatchObject({ kind: "int64", value: "9007199254740993" });
  });

  it("in tool-call arguments is refused with 400 (tree.set takes it as a string with kind int64)", async () => {
    const call = (args: string) =>
      rawRequest(server.url, {
        method: "POST",
        path: "/v1/tools/tree.set/call",
        headers: JSON_TYPE,
        body: `{"args":${args}}`,
      });
    const res = await call('{"key":"/p/tool","value":9007199254740993}');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error.code).toBe("HTTP_INEXACT_NUMBER");
    expect(await server.tree.get("/p/tool")).toBeUndefined();
    const ok = await call('{"key":"/p/tool","kind":"int64","value":"9007199254740993"}');
    expect(JSON.parse(ok.text).kind).toBe("ok");
    expect((await server.tree.get("/p/tool"))?.kind).toBe("int64");
  });
});

describe("the tree's refusal of an inexact number on the wire", () => {
  it("answers TREE_INEXACT_NUMBER as 400 HTTP_INEXACT_NUMBER, message and details kept (the code clients have always read)", () => {
    let raised: unknown;
    try {
      exactValue(undefined, { n: 2n ** 60n });
    } catch (err) {
      raised = err;
    }
    expect(raised).toBeInstanceOf(TreeError);
    expect((raised as TreeError).code).toBe("TREE_INEXACT_NUMBER");
    const mapped = mapError(raised);
    expect(mapped.status).toBe(400);
    expect(mapped.expected).toBe(true);
    expect(mapped.body.error).toEqual({
      code: "HTTP_INEXACT_NUMBER",
      message: (raised as TreeError).message,
      at: "value.n",
      value: (2n ** 60n).toString(),
    });
    // the tree's other codes answer under their own names
    expect(mapError(new TreeError("TREE_INVALID_VALUE", "bad")).body.error.code).toBe("TREE_INVALID_VALUE");
  });
});

describe("a body nested deeper than the limit", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

  it(`answers 400 HTTP_JSON_TOO_DEEP past ${MAX_JSON_DEPTH} levels on every body route, never a 500`, async () => {
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      for (const [method, path] of [
        ["PUT", "/v1/tree/p/deep"],
        ["POST", "/v1/tree/p/deeps/"],
        ["POST", "/v1/txn"],
      ] as const) {
        const res = await rawRequest(server.url, { method, path, headers: JSON_TYPE, body: nested(depth) });
        expect({ method, path, depth, status: res.status }).toEqual({ method, path, depth, status: 400 });
        expect(JSON.parse(res.text).error.code).toBe("HTTP_JSON_TOO_DEEP");
      }
    }
    // Brackets inside strings do not count.
    expect((await put("/v1/tree/p/deep", JSON.stringify("[".repeat(1000)))).status).toBe(200);
    expect((await put("/v1/tree/p/deep", nested(MAX_JSON_DEPTH))).status).toBe(200);
    // The server still answers.
    expect((await rawRequest(server.url, { path: "/healthz" })).status).toBe(200);
  });
});
