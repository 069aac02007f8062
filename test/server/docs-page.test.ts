/** `/docs`: the OpenAPI document as a page — a table of contents, every operation, nothing external. */
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anchorOf, type OpenApiDoc, renderDocs } from "../../server/routes/docs.js";
import { startTestServer, type TestServer } from "./helpers.js";

let s: TestServer;
const auth = { authorization: "Bearer tok-docs" };
beforeAll(async () => {
  // With a token and the web page: /docs needs the credential, which a browser following the page's
  // link sends as the page's cookie.
  s = await startTestServer({ token: "tok-docs", web: {} });
});
afterAll(async () => {
  await s.close();
});

describe("/docs", () => {
  it("renders every operation as a section with a table-of-contents entry, and links the JSON document", async () => {
    const res = await request(`${s.url}/docs`, { headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.headers["content-security-policy"]).toMatch(/default-src 'none'/);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    const html = await res.body.text();
    const doc = (await (await request(`${s.url}/openapi.json`, { headers: auth })).body.json()) as OpenApiDoc;
    const ops = Object.entries(doc.paths ?? {}).flatMap(([path, o]) =>
      Object.keys(o).map((m): [string, string] => [m, path]),
    );
    expect(ops.length).toBeGreaterThan(10);
    for (const [method, path] of ops) {
      const id = anchorOf(method, path);
      expect(html, `${method} ${path}`).toContain(`<li><a href="#${id}">`);
      expect(html, `${method} ${path}`).toContain(`<section id="${id}">`);
    }
    expect(new Set(ops.map(([m, p]) => anchorOf(m, p))).size).toBe(ops.length);
    expect(html).toContain('href="/openapi.json"');
    // Examples are shown, and the page is self-contained: no script, nothing fetched from elsewhere.
    expect(html).toContain("hello world");
    expect(html).not.toMatch(/<script|src=|https?:\/\//i);
  });

  it("escapes every text it takes from the document", () => {
    const evil = `<script>alert("x")</script>'&`;
    const html = renderDocs({
      info: { title: evil, description: evil },
      paths: {
        [`/x/${evil}`]: {
          get: {
            summary: evil,
            parameters: [{ name: evil, in: "query", description: evil }],
            responses: {
              [evil]: {
                description: evil,
                headers: { [evil]: { description: evil } },
                content: { [evil]: { schema: { description: evil }, examples: { [evil]: { value: evil } } } },
              },
            },
          },
        },
      },
    } satisfies OpenApiDoc);
    expect(html).not.toContain("<script");
    expect(html).not.toContain(`"x"`);
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&amp;");
  });

  it("is linked from the web page, and opens with the page's cookie but not without a credential", async () => {
    const page = await (await request(`${s.url}/`)).body.text();
    expect(page).toMatch(/<a [^>]*href="\/docs"/);
    const bare = await request(`${s.url}/docs`);
    expect(bare.statusCode).toBe(401);
    await bare.body.dump();
    const traded = await request(`${s.url}/?token=tok-docs`);
    await traded.body.dump();
    const cookie = String(traded.headers["set-cookie"]).split(";")[0] as string;
    const followed = await request(`${s.url}/docs`, { headers: { cookie } });
    expect(followed.statusCode).toBe(200);
    await followed.body.dump();
  });
});
