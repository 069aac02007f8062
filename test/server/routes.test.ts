// Over 400 lines: every tree route against one in-process server, a describe per route family; a split would start that server once per file.
import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "./helpers.js";
import { startTestServer } from "./helpers.js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ listen: false, bodyLimit: 64 * 1024, tree: { maxValueBytes: 32 * 1024 } });
});
afterAll(async () => {
  await s.close();
});

async function call(method: string, url: string, o: Omit<InjectOptions, "method" | "url"> = {}) {
  const res = await s.app.inject({ method: method as "GET", url, ...o });
  const body =
    res.body === ""
      ? undefined
      : /^application\/json/.test(String(res.headers["content-type"]))
        ? res.json()
        : res.body;
  return { status: res.statusCode, headers: res.headers, body };
}
const put = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  call("PUT", url, {
    payload: JSON.stringify(payload),
    headers: { "content-type": "application/json", ...headers },
  });

describe("GET /v1/tree/<key>", () => {
  it("answers a value with its metadata and an ETag of its version", async () => {
    await put("/v1/tree/get/a", { kind: "char/utf8", value: "hello" });
    const r = await call("GET", "/v1/tree/get/a");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ key: "/get/a", kind: "char/utf8", value: "hello", version: 1, ro: false });
    expect(r.body.createRev).toBe(r.body.modRev);
    expect(typeof r.body.mtime).toBe("number");
    expect(r.headers.etag).toBe('"1"');
  });

  it("answers 404 TREE_NOT_FOUND for an absent key", async () => {
    const r = await call("GET", "/v1/tree/get/absent");
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("TREE_NOT_FOUND");
  });

  it("answers 304 when If-None-Match holds the current ETag", async () => {
    await put("/v1/tree/get/etag", 1);
    const r = await call("GET", "/v1/tree/get/etag", { headers: { "if-none-match": '"1"' } });
    expect(r.status).toBe(304);
    // A 304 has no body, so no Content-Length either (strict clients refuse a mismatch).
    expect(r.body).toBeUndefined();
    expect(r.headers["content-length"]).toBeUndefined();
    expect((await call("GET", "/v1/tree/get/etag", { headers: { "if-none-match": "*" } })).status).toBe(304);
    expect((await call("GET", "/v1/tree/get/etag", { headers: { "if-none-match": '"7"' } })).status).toBe(
      200,
    );
  });

  it("answers the retained previous versions with ?history=1, newest first (kept under /byteseek/)", async () => {
    for (const v of [1, 2, 3]) await put("/v1/tree/byteseek/notes/h", v);
    const r = await call("GET", "/v1/tree/byteseek/notes/h?history=1");
    expect(r.status).toBe(200);
    expect(r.body.history.map((h: { value: number }) => h.value)).toEqual([2, 1]);
    expect((await call("GET", "/v1/tree/get/never?history=1")).status).toBe(404);
  });

  it("keeps int64 exact beyond 2^53 as a decimal string", async () => {
    await put("/v1/tree/get/big", { kind: "int64", value: "9223372036854775807" });
    const r = await call("GET", "/v1/tree/get/big");
    expect(r.body).toMatchObject({ kind: "int64", value: "9223372036854775807" });
  });

  it("decodes percent-encoded keys, including odd characters", async () => {
    const w = await put("/v1/tree/get/a%20b%3F%23%25/%C3%BC%F0%9F%98%80", "x");
    expect(w.status).toBe(200);
    expect(w.body.key).toBe("/get/a b?#%/ü😀");
    const r = await call("GET", "/v1/tree/get/a%20b%3F%23%25/%C3%BC%F0%9F%98%80");
    expect(r.body.value).toBe("x");
  });

  it("refuses bad percent-encoding, invalid UTF-8, control characters and dot segments with 400", async () => {
    for (const url of [
      "/v1/tree/x/%zz",
      "/v1/tree/x/%C3",
      "/v1/tree/x/%FF%FE",
      "/v1/tree/x/%00",
      "/v1/tree/x//y",
    ]) {
      const r = await call("GET", url);
      expect(r.status, url).toBe(400);
      expect(["TREE_INVALID_KEY", "HTTP_BAD_REQUEST"]).toContain(r.body.error.code);
    }
  });
});

describe("GET /v1/tree/<dir/>", () => {
  beforeAll(async () => {
    for (const n of ["b", "a", "10", "9"]) await put(`/v1/tree/ls/${n}`, n);
    await put("/v1/tree/ls/sub/x", 1);
    await put("/v1/tree/ls/sub/deep/y", 2);
    await put("/v1/tree/ls/%E2%80%A5sys", 3);
  });

  it("lists children in natural order, directories with a count", async () => {
    const r = await call("GET", "/v1/tree/ls/");
    expect(r.status).toBe(200);
    expect(r.body.key).toBe("/ls/");
    expect(r.body.children.map((c: { name: string }) => c.name)).toEqual(["9", "10", "a", "b", "sub/"]);
    expect(r.body.children[4]).toMatchObject({ kind: "index", count: 2 });
    expect(r.body.children[0]).toMatchObject({ kind: "char/utf8", value: "9", version: 1 });
    expect(r.body.next).toBeUndefined();
  });

  it("paginates with limit, after and next", async () => {
    const p1 = await call("GET", "/v1/tree/ls/?limit=2");
    expect(p1.body.children.map((c: { name: string }) => c.name)).toEqual(["9", "10"]);
    expect(p1.body.next).toBe("10");
    const p2 = await call("GET", `/v1/tree/ls/?limit=2&after=${p1.body.next}`);
    expect(p2.body.children.map((c: { name: string }) => c.name)).toEqual(["a", "b"]);
    const p3 = await call("GET", `/v1/tree/ls/?limit=2&after=${p2.body.next}`);
    expect(p3.body.children.map((c: { name: string }) => c.name)).toEqual(["sub/"]);
    expect(p3.body.next).toBeUndefined();
  });

  it("leaves values out with ?values=0 and shows system entries with ?system=1", async () => {
    const r = await call("GET", "/v1/tree/ls/?values=0&system=1");
    expect(r.body.children.every((c: { value?: unknown }) => c.value === undefined)).toBe(true);
    expect(r.body.children.map((c: { name: string }) => c.name)).toContain("‥sys");
  });

  it("returns the whole subtree depth-first with ?recursive=1, paginated the same way", async () => {
    const all = await call("GET", "/v1/tree/ls/?recursive=1");
    const names = all.body.children.map((c: { name: string }) => c.name);
    expect(names).toEqual(["9", "10", "a", "b", "sub/", "sub/deep/", "sub/deep/y", "sub/x"]);
    const paged: string[] = [];
    let after: string | undefined;
    for (;;) {
      const r = await call(
        "GET",
        `/v1/tree/ls/?recursive=1&limit=3${after ? `&after=${encodeURIComponent(after)}` : ""}`,
      );
      paged.push(...r.body.children.map((c: { name: string }) => c.name));
      if (r.body.next === undefined) break;
      after = r.body.next;
    }
    expect(paged).toEqual(names);
  });

  it("stops at ?depth=N levels", async () => {
    const r = await call("GET", "/v1/tree/ls/?depth=2");
    expect(r.body.children.map((c: { name: string }) => c.name)).toEqual([
      "9",
      "10",
      "a",
      "b",
      "sub/",
      "sub/deep/",
      "sub/x",
    ]);
  });

  it("answers the directory node itself with ?node=1", async () => {
    const r = await call("GET", "/v1/tree/ls/sub/?node=1");
    expect(r.body).toMatchObject({ key: "/ls/sub/", kind: "index", count: 2 });
  });

  it("gives a directory node an ETag that changes with its child count, so no cache answers a stale count", async () => {
    await call("PUT", "/v1/tree/etagdir/");
    const first = await call("GET", "/v1/tree/etagdir/?node=1");
    const etag = first.headers.etag as string;
    expect(etag).toBe(`"${first.body.version}.0"`);
    const same = { headers: { "if-none-match": etag } };
    expect((await call("GET", "/v1/tree/etagdir/?node=1", same)).status).toBe(304);

    // Adding a child leaves the directory's version alone but changes its answer (and ETag).
    await put("/v1/tree/etagdir/a", 1);
    const after = await call("GET", "/v1/tree/etagdir/?node=1", same);
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ version: first.body.version, count: 1 });
    expect(after.headers.etag).toBe(`"${first.body.version}.1"`);
    await call("DELETE", "/v1/tree/etagdir/a");
    expect((await call("GET", "/v1/tree/etagdir/?node=1", same)).status).toBe(304);
  });

  it("takes a directory's ETag in If-Match only while its count still matches", async () => {
    await put("/v1/tree/etagdel/a", 1);
    const etag = (await call("GET", "/v1/tree/etagdel/?node=1")).headers.etag as string;
    await put("/v1/tree/etagdel/b", 2);
    const stale = await call("DELETE", "/v1/tree/etagdel/", { headers: { "if-match": etag } });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatchObject({ code: "TREE_VERSION_MISMATCH", current: { count: 2 } });
    const fresh = (await call("GET", "/v1/tree/etagdel/?node=1")).headers.etag as string;
    const ok = await call("DELETE", "/v1/tree/etagdel/", { headers: { "if-match": fresh } });
    expect(ok.status).toBe(200);
    expect(ok.body.removed).toBeGreaterThan(0);
  });

  it("answers 404 for an absent directory and 400 for bad query values", async () => {
    expect((await call("GET", "/v1/tree/nodir/")).status).toBe(404);
    const bad = await call("GET", "/v1/tree/ls/?limit=zero");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("HTTP_BAD_REQUEST");
    expect((await call("GET", "/v1/tree/ls/?depth=0")).status).toBe(400);
  });
});

describe("PUT /v1/tree/<key>", () => {
  it("infers kinds from plain JSON values", async () => {
    const cases: Array<[unknown, string]> = [
      [42, "int64"],
      [-1.5, "float64"],
      [true, "bool"],
      ["s", "char/utf8"],
      [{ a: 1 }, "json"],
      [[1, 2], "json"],
      [null, "json"],
    ];
    for (const [i, [v, kind]] of cases.entries()) {
      const w = await put(`/v1/tree/put/infer${i}`, v);
      expect(w.status).toBe(200);
      expect((await call("GET", `/v1/tree/put/infer${i}`)).body).toMatchObject({ kind, value: v });
    }
  });

  it("takes the typed form with kind, value and ro, and answers version and revision", async () => {
    const w = await put("/v1/tree/put/typed", { kind: "float64", value: 2, ro: true });
    expect(w.status).toBe(200);
    expect(w.body).toEqual({ key: "/put/typed", version: 1, rev: expect.any(Number) });
    expect(w.headers["x-byteseek-revision"]).toBe(String(w.body.rev));
    expect((await call("GET", "/v1/tree/put/typed")).body).toMatchObject({
      kind: "float64",
      value: 2,
      ro: true,
    });
    const refused = await put("/v1/tree/put/typed", 3);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("TREE_READ_ONLY");
    expect((await put("/v1/tree/put/typed?force=1", 3)).status).toBe(200);
  });

  it("refuses an unknown kind or a value that does not fit its kind with 400", async () => {
    const r1 = await put("/v1/tree/put/bad", { kind: "int32", value: 1 });
    expect(r1.status).toBe(400);
    expect(r1.body.error.code).toBe("TREE_INVALID_VALUE");
    const r2 = await put("/v1/tree/put/bad", { kind: "int64", value: "1.5" });
    expect(r2.status).toBe(400);
    expect(r2.body.error.message).toMatch(/int64/);
  });

  it("compares and sets with If-Match, answering 412 with the current node on a mismatch", async () => {
    const w1 = await put("/v1/tree/put/cas", 1);
    const ok = await put("/v1/tree/put/cas", 2, { "if-match": w1.headers.etag as string });
    expect(ok.status).toBe(200);
    expect(ok.body.version).toBe(2);
    const stale = await put("/v1/tree/put/cas", 3, { "if-match": '"1"' });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe("TREE_VERSION_MISMATCH");
    expect(stale.body.error.current).toMatchObject({ key: "/put/cas", version: 2, value: 2 });
    expect((await put("/v1/tree/put/cas-absent", 1, { "if-match": "*" })).status).toBe(412);
    expect((await put("/v1/tree/put/cas", 1, { "if-match": "v2" })).status).toBe(400);
  });

  it("creates only with If-None-Match: *, 412 if the key exists", async () => {
    expect((await put("/v1/tree/put/once", 1, { "if-none-match": "*" })).status).toBe(200);
    const again = await put("/v1/tree/put/once", 2, { "if-none-match": "*" });
    expect(again.status).toBe(412);
    expect(again.body.error.code).toBe("TREE_EXISTS");
  });

  it("creates a directory when the key ends with '/'", async () => {
    const r = await call("PUT", "/v1/tree/put/dir/");
    expect(r.status).toBe(200);
    expect((await call("GET", "/v1/tree/put/dir/")).body.children).toEqual([]);
  });

  it("answers 400 for bad JSON, 413 over the body or value limit, 415 for other media types", async () => {
    const bad = await call("PUT", "/v1/tree/put/x", {
      payload: "{nope",
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("HTTP_INVALID_JSON");
    const empty = await call("PUT", "/v1/tree/put/x", {
      payload: "",
      headers: { "content-type": "application/json" },
    });
    expect(empty.status).toBe(400);
    const huge = await put("/v1/tree/put/x", "y".repeat(70 * 1024));
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe("HTTP_BODY_TOO_LARGE");
    const big = await put("/v1/tree/put/x", "y".repeat(40 * 1024));
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("TREE_VALUE_TOO_LARGE");
    const form = await call("PUT", "/v1/tree/put/x", {
      payload: "a=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(415);
    expect(form.body.error.code).toBe("HTTP_UNSUPPORTED_MEDIA_TYPE");
    const missing = await call("PUT", "/v1/tree/put/x");
    expect(missing.status).toBe(400);
  });
});

describe("POST /v1/tree/<dir/>", () => {
  it("appends the next dense child: 201 with its Location", async () => {
    const a = await call("POST", "/v1/tree/q/", {
      payload: "1",
      headers: { "content-type": "application/json" },
    });
    const b = await call("POST", "/v1/tree/q/", {
      payload: '{"kind":"char/utf8","value":"two"}',
      headers: { "content-type": "application/json" },
    });
    expect(a.status).toBe(201);
    expect(a.headers.location).toBe("/v1/tree/q/0");
    expect(b.headers.location).toBe("/v1/tree/q/1");
    expect((await call("GET", b.headers.location as string)).body.value).toBe("two");
  });

  it("answers 405 on a value key", async () => {
    const r = await call("POST", "/v1/tree/q/0", {
      payload: "1",
      headers: { "content-type": "application/json" },
    });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBeDefined();
  });
});

describe("DELETE /v1/tree/<key>", () => {
  it("deletes a value, with If-Match", async () => {
    await put("/v1/tree/del/a", 1);
    expect((await call("DELETE", "/v1/tree/del/a", { headers: { "if-match": '"9"' } })).status).toBe(412);
    const r = await call("DELETE", "/v1/tree/del/a", { headers: { "if-match": '"1"' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ key: "/del/a", deleted: true, version: 0 });
    expect((await call("GET", "/v1/tree/del/a")).status).toBe(404);
    expect((await call("DELETE", "/v1/tree/del/a")).body.deleted).toBe(false);
  });

  it("deletes a directory and everything under it", async () => {
    await put("/v1/tree/del/d/x", 1);
    await put("/v1/tree/del/d/y/z", 1);
    const r = await call("DELETE", "/v1/tree/del/d/");
    expect(r.status).toBe(200);
    expect(r.body.removed).toBe(4);
    expect((await call("GET", "/v1/tree/del/d/")).status).toBe(404);
  });

  it("with ?empty=1 deletes a directory only when empty (409 otherwise)", async () => {
    await put("/v1/tree/del/e/x", 1);
    const r = await call("DELETE", "/v1/tree/del/e/?empty=1");
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("TREE_NOT_EMPTY");
  });
});

describe("POST /v1/txn", () => {
  it("runs success when every compare holds, failure otherwise", async () => {
    await put("/v1/tree/txn/a", 1);
    const ok = await call("POST", "/v1/txn", {
      payload: {
        compare: [{ key: "/txn/a", target: "version", value: 1 }],
        success: [
          { op: "set", key: "/txn/b", kind: "int64", value: "12345678901234567" },
          { op: "get", key: "/txn/a" },
          { op: "get", key: "/txn/none" },
        ],
        failure: [{ op: "del", key: "/txn/a" }],
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.succeeded).toBe(true);
    expect(ok.body.results[0]).toMatchObject({ key: "/txn/b", version: 1 });
    expect(ok.body.results[1]).toMatchObject({ key: "/txn/a", value: 1 });
    expect(ok.body.results[2]).toBeNull();
    const no = await call("POST", "/v1/txn", {
      payload: {
        compare: [{ key: "/txn/a", target: "value", op: "==", value: 2 }],
        success: [],
        failure: [{ op: "get", key: "/txn/b" }],
      },
    });
    expect(no.body.succeeded).toBe(false);
    expect(no.body.results[0].value).toBe("12345678901234567");
  });

  it("refuses more than 128 operations and malformed requests with 400", async () => {
    const many = Array.from({ length: 129 }, (_, i) => ({ op: "get", key: `/k${i}` }));
    const r = await call("POST", "/v1/txn", { payload: { success: many } });
    expect(r.status).toBe(400);
    const split = await call("POST", "/v1/txn", {
      payload: { success: many.slice(0, 100), failure: many.slice(0, 100) },
    });
    expect(split.status).toBe(400);
    expect(split.body.error.code).toBe("TREE_TXN_INVALID");
    const bad = await call("POST", "/v1/txn", { payload: { success: [{ op: "explode", key: "/x" }] } });
    expect(bad.status).toBe(400);
    // The tree's own code, as the embedded tree answers, with what is wrong.
    expect(bad.body.error.code).toBe("TREE_TXN_INVALID");
    expect(bad.body.error.message).toMatch(/\/success\/0\/op/);
    expect(bad.body.error.issues).toEqual([expect.objectContaining({ path: "/success/0/op" })]);
  });
});

describe("POST /v1/txn reads etcd's spelling and refuses what it does not know", () => {
  it("takes etcd's result NOT_EQUAL as != (the write does not go through when the value is equal)", async () => {
    await put("/v1/tree/etcd/a", 1);
    const r = await call("POST", "/v1/txn", {
      payload: {
        compare: [{ key: "/etcd/a", target: "VALUE", result: "NOT_EQUAL", value: 1 }],
        success: [{ op: "set", key: "/etcd/a", value: 2 }],
        failure: [{ op: "get", key: "/etcd/a" }],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.succeeded).toBe(false);
    expect(r.body.results[0]).toMatchObject({ key: "/etcd/a", value: 1 });
    const mod = await call("POST", "/v1/txn", {
      payload: {
        compare: [{ key: "/etcd/a", target: "MOD", result: "GREATER", value: 0 }],
        success: [{ op: "get", key: "/etcd/a" }],
      },
    });
    expect(mod.body.succeeded).toBe(true);
  });

  it("refuses a typo'd field (sucess) with 400 naming it, and writes nothing", async () => {
    const r = await call("POST", "/v1/txn", {
      payload: { sucess: [{ op: "set", key: "/etcd/typo", value: 1 }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("TREE_TXN_INVALID");
    expect(r.body.error.message).toMatch(/sucess/);
    expect((await call("GET", "/v1/tree/etcd/typo")).status).toBe(404);
  });

  it("refuses an unknown field in a compare or an operation, and an unknown operator", async () => {
    for (const payload of [
      { compare: [{ key: "/etcd/a", target: "value", value: 1, resutl: "EQUAL" }] },
      { success: [{ op: "set", key: "/etcd/b", value: 1, foce: true }] },
      { compare: [{ key: "/etcd/a", target: "value", op: "=~", value: 1 }] },
      { compare: [{ key: "/etcd/a", target: "value", result: "ALMOST", value: 1 }] },
    ]) {
      const r = await call("POST", "/v1/txn", { payload });
      expect({ payload, status: r.status }).toEqual({ payload, status: 400 });
      expect(r.body.error.code).toBe("TREE_TXN_INVALID");
    }
    expect((await call("GET", "/v1/tree/etcd/b")).status).toBe(404);
  });

  it("refuses an op and a result that disagree rather than pick one", async () => {
    const r = await call("POST", "/v1/txn", {
      payload: { compare: [{ key: "/etcd/a", target: "version", op: "==", result: "LESS", value: 1 }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/disagree/);
  });
});

describe("export and import", () => {
  it("exports a directory as NDJSON and imports it back elsewhere", async () => {
    await put("/v1/tree/exp/a", { kind: "int64", value: "-9223372036854775808" });
    await put("/v1/tree/exp/sub/b", { kind: "char/utf8", value: "b", ro: true });
    const r = await call("GET", "/v1/export/exp/");
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toMatch(/application\/x-ndjson/);
    const lines = (r.body as string)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { key: "/exp/", kind: "index" },
      { key: "/exp/a", kind: "int64", value: "-9223372036854775808" },
      { key: "/exp/sub/", kind: "index" },
      { key: "/exp/sub/b", kind: "char/utf8", value: "b", ro: true },
    ]);
    const moved = lines.map((l) => JSON.stringify({ ...l, key: l.key.replace("/exp/", "/imp/") })).join("\n");
    const imp = await call("POST", "/v1/import", {
      payload: moved,
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(imp.status).toBe(200);
    expect(imp.body.imported).toBe(4);
    expect((await call("GET", "/v1/tree/imp/a")).body.value).toBe("-9223372036854775808");
  });

  it("imports all or nothing, naming the bad line", async () => {
    const body = '{"key":"/imp2/a","kind":"int64","value":1}\n{"key":"/imp2/b","kind":"int64","value":"x"}\n';
    const r = await call("POST", "/v1/import", {
      payload: body,
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "TREE_IMPORT_FAILED", line: 2 });
    expect((await call("GET", "/v1/tree/imp2/a")).status).toBe(404);
  });

  it("answers 413 for an import over the body limit, 415 for JSON, 404 for an absent export", async () => {
    const line = `${JSON.stringify({ key: "/big/x", kind: "char/utf8", value: "z".repeat(1000) })}\n`;
    const r = await call("POST", "/v1/import", {
      payload: line.repeat(80),
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(r.status).toBe(413);
    expect((await call("POST", "/v1/import", { payload: { a: 1 } })).status).toBe(415);
    expect((await call("GET", "/v1/export/nothing/")).status).toBe(404);
    expect((await call("GET", "/v1/export/exp/a")).status).toBe(400);
  });
});

describe("health, OpenAPI, docs and unknown routes", () => {
  it("answers /healthz with the revision", async () => {
    const r = await call("GET", "/healthz");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, rev: expect.any(Number) });
  });

  it("serves an OpenAPI document generated from the route schemas, and a docs page", async () => {
    const r = await call("GET", "/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body.openapi).toMatch(/^3\./);
    const paths = Object.keys(r.body.paths);
    for (const p of [
      "/v1/tree/{key}",
      "/v1/txn",
      "/v1/watch/{prefix}",
      "/v1/export/{dir}",
      "/v1/import",
      "/healthz",
    ])
      expect(paths).toContain(p);
    expect(JSON.stringify(r.body.paths["/v1/txn"])).toContain("compare");
    const docs = await call("GET", "/docs");
    expect(docs.status).toBe(200);
    expect(docs.body).toContain("/v1/txn");
  });

  it("answers 404 HTTP_NOT_FOUND in the error shape for an unknown route, with the revision header", async () => {
    const r = await call("GET", "/nothing/here");
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe("HTTP_NOT_FOUND");
    expect(r.headers["x-byteseek-revision"]).toBeDefined();
  });

  it("puts X-Byteseek-Revision and X-Byteseek-Compacted-Revision on every response, errors included", async () => {
    for (const [m, u] of [
      ["GET", "/healthz"],
      ["GET", "/v1/tree/%zz"],
      ["GET", "/v1/%zz"],
      ["GET", "/%E0%A4"],
      ["GET", "/v1/tree/absent"],
      ["PATCH", "/v1/tree/x"],
    ] as const) {
      const { headers } = await call(m, u);
      expect(headers["x-byteseek-revision"], `${m} ${u}`).toMatch(/^[0-9]+$/);
      expect(headers["x-byteseek-compacted-revision"], `${m} ${u}`).toMatch(/^[0-9]+$/);
    }
  });
});
