import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { encodeRequest, parseResponse, runLoad } from "../../bench/load.js";

const bytes = (s: string) => Buffer.from(s, "latin1");

describe("the bench's load driver", () => {
  describe("parseResponse", () => {
    it("takes a Content-Length response whole, and waits while its body is short", () => {
      const full = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
      expect(parseResponse(bytes(full))).toEqual({ length: full.length, status: 200 });
      expect(parseResponse(bytes(full.slice(0, -1)))).toBeUndefined();
      expect(parseResponse(bytes("HTTP/1.1 404 Not Found\r\ncontent-len"))).toBeUndefined();
    });

    it("splits two responses that arrived together", () => {
      const one = "HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok";
      const two = "HTTP/1.1 412 Precondition Failed\r\ncontent-length: 0\r\n\r\n";
      const buf = bytes(one + two);
      expect(parseResponse(buf)).toEqual({ length: one.length, status: 201 });
      expect(parseResponse(buf, one.length)).toEqual({ length: two.length, status: 412 });
    });

    it("follows chunked framing to the last chunk, trailers included", () => {
      const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
      const plain = `${head}5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n`;
      expect(parseResponse(bytes(plain))).toEqual({ length: plain.length, status: 200 });
      const trailers = `${head}2\r\nhi\r\n0\r\nx-sum: 1\r\n\r\n`;
      expect(parseResponse(bytes(trailers))).toEqual({ length: trailers.length, status: 200 });
      expect(parseResponse(bytes(plain.slice(0, -2)))).toBeUndefined();
    });

    it("gives a 304 no body, and refuses what is not HTTP/1.x", () => {
      const r = "HTTP/1.1 304 Not Modified\r\ncontent-length: 10\r\n\r\n";
      expect(parseResponse(bytes(r))).toEqual({ length: r.length, status: 304 });
      expect(() => parseResponse(bytes("SSH-2.0-x\r\n\r\n"))).toThrow(/not an HTTP/);
    });
  });

  it("encodes a request with its body's length", () => {
    const wire = encodeRequest("h:1", {
      method: "PUT",
      path: "/k",
      body: "ü",
      headers: { "content-type": "application/json" },
    }).toString("utf8");
    expect(wire).toBe(
      "PUT /k HTTP/1.1\r\nhost: h:1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\nü",
    );
  });

  describe("runLoad against a real server", () => {
    let server: Server | undefined;
    afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

    it("counts 2xx and other answers apart, over keep-alive connections, for the time asked", async () => {
      const seen = new Map<string, number>();
      const sockets = new Set<unknown>();
      server = createServer((req, res) => {
        sockets.add(req.socket);
        let body = "";
        req.on("data", (c) => {
          body += c;
        });
        req.on("end", () => {
          seen.set(
            `${req.method} ${req.url} ${body}`,
            (seen.get(`${req.method} ${req.url} ${body}`) ?? 0) + 1,
          );
          if (req.url === "/missing") res.writeHead(404).end("no");
          else if (req.url === "/chunked")
            res.end(body); // no Content-Length given: chunked
          else res.writeHead(200, { "content-length": 2 }).end("ok");
        });
      });
      await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
      const { port } = server.address() as AddressInfo;
      const result = await runLoad({
        url: `http://127.0.0.1:${port}`,
        connections: 4,
        seconds: 0.4,
        requests: [
          { method: "GET", path: "/ok" },
          { method: "GET", path: "/missing" },
          { method: "PUT", path: "/chunked", body: "{}", headers: { "content-type": "application/json" } },
        ],
      });
      const count = (k: string) => seen.get(k) ?? 0;
      expect(result.errors).toBe(0);
      expect(result.ok).toBe(count("GET /ok ") + count("PUT /chunked {}"));
      expect(result.non2xx).toBe(count("GET /missing "));
      expect(result.ok).toBeGreaterThan(0);
      expect(result.non2xx).toBeGreaterThan(0);
      expect(sockets.size).toBe(4); // one socket per connection, kept alive
      expect(result.duration).toBeGreaterThan(0.3);
      expect(result.p99).toBeGreaterThanOrEqual(result.p50);
    });
  });
});
