import { Pool } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

const CLIENTS = 32;
let s: TestServer;
let pool: Pool;
beforeAll(async () => {
  s = await startTestServer();
  pool = new Pool(s.url, { connections: CLIENTS });
});
afterAll(async () => {
  await pool.close();
  await s.close();
});

async function http(
  method: "GET" | "PUT" | "POST",
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await pool.request({
    method,
    path,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const json = (await res.body.json()) as Record<string, unknown> & { error?: { code: string } };
  return { status: res.statusCode, headers: res.headers, json };
}

describe("concurrent clients", () => {
  it("32 compare-and-set writers on one key: every success is a distinct version, no update is lost", async () => {
    const PER_CLIENT = 2;
    await http("PUT", "/v1/tree/cas/counter", 0);
    const versions: number[] = [];
    let conflicts = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let done = 0; done < PER_CLIENT; ) {
          const cur = await http("GET", "/v1/tree/cas/counter");
          const put = await http("PUT", "/v1/tree/cas/counter", (cur.json.value as number) + 1, {
            "if-match": cur.headers.etag as string,
          });
          if (put.status === 200) {
            versions.push(put.json.version as number);
            done++;
          } else {
            expect(put.status).toBe(412);
            expect(put.json.error?.code).toBe("TREE_VERSION_MISMATCH");
            conflicts++;
          }
        }
      }),
    );
    expect(new Set(versions).size).toBe(CLIENTS * PER_CLIENT);
    const final = await http("GET", "/v1/tree/cas/counter");
    expect(final.json.value).toBe(CLIENTS * PER_CLIENT);
    expect(final.json.version).toBe(CLIENTS * PER_CLIENT + 1);
    expect(conflicts).toBeGreaterThan(0);
  });

  it("32 concurrent appenders get dense, unique numbers", async () => {
    const PER_CLIENT = 10;
    const locations: string[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = 0; i < PER_CLIENT; i++) {
          const r = await http("POST", "/v1/tree/queue/", { c, i });
          expect(r.status).toBe(201);
          locations.push(r.headers.location as string);
        }
      }),
    );
    const numbers = locations.map((l) => Number(l.slice("/v1/tree/queue/".length))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: CLIENTS * PER_CLIENT }, (_, i) => i));
    const listing = await http("GET", "/v1/tree/queue/?limit=1000");
    expect((listing.json.children as unknown[]).length).toBe(CLIENTS * PER_CLIENT);
  });
});
