import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LlmClient } from "../../tools/impl/llm.js";
import { str } from "../../tree/value.js";
import { declare, type Harness, harness, recordAt, setPolicy } from "./helpers.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

describe("http impl", () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  let hang: Array<() => void> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
        if (req.url?.startsWith("/big")) {
          res.end("x".repeat(200_000));
        } else if (req.url?.startsWith("/teapot")) {
          res.statusCode = 418;
          res.end('{"error":"short and stout"}');
        } else if (req.url?.startsWith("/hang")) {
          hang.push(() => res.end("late"));
        } else {
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify({ echoed: body ? JSON.parse(body) : null, url: req.url }));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const f of hang) f();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  let h: Harness;
  beforeEach(async () => {
    h = await harness("memory");
    seen.length = 0;
  });
  afterEach(async () => {
    for (const f of hang) f();
    hang = [];
    await h.dispose();
  });

  const params = { type: "object", properties: { q: { type: "string" }, id: { type: "string" } } };

  it("posts the arguments as JSON to an allowed host and answers the body", async () => {
    await setPolicy(h.tree, { httpHosts: ["127.0.0.1"] });
    await declare(h.tree, {
      name: "web.echo",
      description: "echo",
      params,
      impl: { kind: "http", url: `${base}/items/{id}`, method: "POST", headers: { "x-test": "1" } },
    });
    const r = await h.runtime.call("web.echo", { q: "a b", id: "x/y" }, { vid: "h" });
    expect(r.kind).toBe("ok");
    expect(JSON.parse(r.text)).toEqual({ echoed: { q: "a b", id: "x/y" }, url: "/items/x%2Fy" });
    expect(r.details).toMatchObject({ status: 200, contentType: "application/json" });
    expect(seen[0]?.headers["content-type"]).toBe("application/json");
    expect(seen[0]?.headers["x-test"]).toBe("1");
  });

  it("sends GET arguments as the query string", async () => {
    await setPolicy(h.tree, { httpHosts: ["127.0.0.1"] });
    await declare(h.tree, {
      name: "web.get",
      description: "get",
      params,
      impl: { kind: "http", url: `${base}/search`, method: "GET" },
    });
    const r = await h.runtime.call("web.get", { q: "a&b" }, { vid: "h" });
    expect(JSON.parse(r.text).url).toBe("/search?q=a%26b");
  });

  it("denies a host the policy does not list, before any request", async () => {
    await declare(h.tree, {
      name: "web.echo",
      description: "echo",
      params,
      impl: { kind: "http", url: `${base}/x`, method: "POST" },
    });
    const r = await h.runtime.call("web.echo", {}, { vid: "h" });
    expect(r).toMatchObject({ kind: "denied", details: { code: "denied" } });
    expect(r.text).toContain("127.0.0.1");
    expect(seen).toHaveLength(0);
    await setPolicy(h.tree, { httpHosts: ["example.org", "127.0.0.1:1"] });
    expect((await h.runtime.call("web.echo", {}, { vid: "h" })).kind).toBe("denied");
  });

  it("answers runtime with the status and the start of the body for a 4xx", async () => {
    await setPolicy(h.tree, { httpHosts: [new URL(base).host] });
    await declare(h.tree, {
      name: "web.tea",
      description: "tea",
      params,
      impl: { kind: "http", url: `${base}/teapot`, method: "PUT" },
    });
    const r = await h.runtime.call("web.tea", {}, { vid: "h" });
    expect(r).toMatchObject({ kind: "runtime", details: { code: "http_status", status: 418 } });
    expect(r.text).toContain("418");
    expect(r.text).toContain("short and stout");
  });

  it("caps a large response with a marker", async () => {
    await setPolicy(h.tree, { httpHosts: ["127.0.0.1"] });
    await declare(h.tree, {
      name: "web.big",
      description: "big",
      params,
      impl: { kind: "http", url: `${base}/big`, method: "GET" },
    });
    const r = await h.runtime.call("web.big", {}, { vid: "h" });
    expect(r.kind).toBe("ok");
    expect(r.details.truncated).toBe(true);
    expect(r.text.endsWith("\n[… response truncated at 50176 bytes]")).toBe(true);
  });

  it("stops a request that hangs at its timeout", async () => {
    await setPolicy(h.tree, { httpHosts: ["127.0.0.1"] });
    await declare(h.tree, {
      name: "web.hang",
      description: "hang",
      params,
      impl: { kind: "http", url: `${base}/hang`, method: "POST", timeoutMs: 300 },
    });
    const r = await h.runtime.call("web.hang", {}, { vid: "h" });
    expect(r).toMatchObject({ kind: "runtime", details: { code: "timeout" } });
    expect((await recordAt(h.tree, r.record!)).kind).toBe("runtime");
  });
});

describe("llm impl", () => {
  const decl = {
    name: "text.summarize",
    description: "summarize",
    params: { type: "object", properties: { text: { type: "string" } } },
    impl: { kind: "llm", prompt: "/byteseek/prompt/summarize" },
  };

  it("answers runtime 'no model configured' without a model", async () => {
    const h = await harness("memory");
    try {
      await declare(h.tree, decl);
      const r = await h.runtime.call("text.summarize", { text: "long" }, { vid: "l" });
      expect(r).toMatchObject({ kind: "runtime", details: { code: "no_model" } });
      expect(r.text).toContain("no model configured: set BYTESEEK_LLM_URL");
    } finally {
      await h.dispose();
    }
  });

  it("calls the injected model with the prompt from the tree and the arguments", async () => {
    const calls: Array<[string, unknown]> = [];
    const llm: LlmClient = {
      async complete(prompt, args) {
        calls.push([prompt, args]);
        return "short";
      },
    };
    const h = await harness("memory", { llm });
    try {
      await declare(h.tree, decl);
      const missing = await h.runtime.call("text.summarize", { text: "long" }, { vid: "l" });
      expect(missing).toMatchObject({ kind: "runtime", details: { code: "not_found" } });
      await h.tree.set("/byteseek/prompt/summarize", str("Summarize the text."));
      const r = await h.runtime.call("text.summarize", { text: "long" }, { vid: "l" });
      expect(r).toMatchObject({ kind: "ok", text: "short" });
      expect(calls).toEqual([["Summarize the text.", { text: "long" }]]);
    } finally {
      await h.dispose();
    }
  });
});
