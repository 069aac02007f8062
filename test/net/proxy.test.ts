import { once } from "node:events";
import { stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { Client } from "undici";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type EgressProxy, startEgressProxy } from "../../tools/net/proxy.js";
import { silent, tempDir } from "../tools/helpers.js";

/** A loopback listener that answers with what it saw: the method, path and Host header. */
async function listener(): Promise<{ server: Server; port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.host} ${req.headers["proxy-authorization"] ?? "-"}`);
    res.end(`hello from ${req.url}`);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port, seen };
}

/** Opens the proxy's socket, writes `text`, and reads until the head and `bodyBytes` of body (or close). */
async function exchange(
  socketPath: string,
  text: string,
): Promise<{ socket: Socket; head: string; body: string }> {
  const socket = connect(socketPath);
  socket.write(text);
  let buf = "";
  return new Promise((resolve, reject) => {
    const done = () => {
      const end = buf.indexOf("\r\n\r\n");
      const head = end < 0 ? buf : buf.slice(0, end);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      const body = end < 0 ? "" : buf.slice(end + 4);
      if (end >= 0 && body.length >= length) {
        socket.removeAllListeners("data");
        resolve({ socket, head, body });
        return true;
      }
      return false;
    };
    socket.on("data", (d: Buffer) => {
      buf += d.toString("latin1");
      done();
    });
    socket.on("close", () => {
      if (!done()) resolve({ socket, head: buf, body: "" });
    });
    socket.on("error", reject);
  });
}

/** Reads from a socket until `needle` has been seen. */
async function readUntil(socket: Socket, needle: string): Promise<string> {
  let buf = "";
  return new Promise((resolve, reject) => {
    socket.on("data", (d: Buffer) => {
      buf += d.toString();
      if (buf.includes(needle)) resolve(buf);
    });
    socket.on("close", () => reject(new Error(`closed before ${needle}: ${buf}`)));
  });
}

let dir: Awaited<ReturnType<typeof tempDir>>;
let target: Awaited<ReturnType<typeof listener>>;
let other: Awaited<ReturnType<typeof listener>>;
let proxies: EgressProxy[];

beforeEach(async () => {
  dir = await tempDir("byteseek-egress-");
  target = await listener();
  other = await listener();
  proxies = [];
});

afterEach(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  target.server.close();
  other.server.close();
  await dir.remove();
});

async function proxyFor(hosts: string[], extra: { maxHeaderBytes?: number } = {}): Promise<EgressProxy> {
  const p = await startEgressProxy({
    dir: dir.path,
    hosts,
    grantRule: "grants.default.net",
    logger: silent,
    ...extra,
  });
  proxies.push(p);
  return p;
}

describe("egress proxy", () => {
  it("listens on a Unix socket only its user may open", async () => {
    const p = await proxyFor([]);
    expect((await stat(p.socketPath)).mode & 0o777).toBe(0o600);
  });

  it("tunnels CONNECT to a host the grant names explicitly (127.0.0.1:<port>)", async () => {
    const p = await proxyFor([`127.0.0.1:${target.port}`]);
    const { socket, head } = await exchange(
      p.socketPath,
      `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    socket.write(`GET /through HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(await readUntil(socket, "hello from /through")).toContain("200 OK");
    socket.destroy();
  });

  it("refuses CONNECT to loopback under * with a 403 naming the host and the grant, and never connects", async () => {
    const p = await proxyFor(["*"]);
    for (const authority of [
      `127.0.0.1:${target.port}`,
      `localhost:${target.port}`,
      `[::1]:${target.port}`,
      `2130706433:${target.port}`,
    ]) {
      const { head, body } = await exchange(p.socketPath, `CONNECT ${authority} HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(head).toMatch(/^HTTP\/1\.1 403/);
      expect(body).toContain(`:${target.port}`);
      expect(body).toContain("grants.default.net");
      expect(body).toContain("wildcards never reach loopback");
    }
    expect(target.seen).toEqual([]);
  });

  it("forwards a plain absolute-URI request to a granted host, without the proxy's own headers", async () => {
    const p = await proxyFor([`127.0.0.1:${target.port}`]);
    const client = new Client("http://egress.invalid", { socketPath: p.socketPath });
    try {
      const res = await client.request({
        method: "GET",
        path: `http://127.0.0.1:${target.port}/plain?q=1`,
        headers: { "proxy-authorization": "Basic c2VjcmV0", host: `127.0.0.1:${target.port}` },
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe("hello from /plain?q=1");
    } finally {
      await client.close();
    }
    expect(target.seen).toEqual([`GET /plain?q=1 127.0.0.1:${target.port} -`]);
  });

  it("refuses a plain request to a port the grant does not name", async () => {
    const p = await proxyFor([`127.0.0.1:${target.port}`]);
    const { head, body } = await exchange(
      p.socketPath,
      `GET http://127.0.0.1:${other.port}/x HTTP/1.1\r\nHost: 127.0.0.1:${other.port}\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1\.1 403/);
    expect(body).toContain(`127.0.0.1:${other.port} is not in this run's grant`);
    expect(other.seen).toEqual([]);
  });

  it("answers 502 naming the host when a granted host does not answer", async () => {
    const closed = await listener();
    closed.server.close();
    await once(closed.server, "close");
    const p = await proxyFor([`127.0.0.1:${closed.port}`]);
    const { head, body } = await exchange(p.socketPath, `CONNECT 127.0.0.1:${closed.port} HTTP/1.1\r\n\r\n`);
    expect(head).toMatch(/^HTTP\/1\.1 502/);
    expect(body).toContain(`127.0.0.1:${closed.port} did not answer`);
  });

  it("cuts the client's answer when a granted host hangs up mid-body, and keeps serving", async () => {
    const cut = createServer((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("partial");
      setImmediate(() => res.socket?.destroy());
    });
    cut.listen(0, "127.0.0.1");
    await once(cut, "listening");
    const port = (cut.address() as AddressInfo).port;
    try {
      const p = await proxyFor([`127.0.0.1:${port}`, `127.0.0.1:${target.port}`]);
      const { head } = await exchange(
        p.socketPath,
        `GET http://127.0.0.1:${port}/x HTTP/1.1\r\nHost: a\r\n\r\n`,
      );
      expect(head).toMatch(/^HTTP\/1\.1 200/);
      const next = await exchange(
        p.socketPath,
        `GET http://127.0.0.1:${target.port}/after HTTP/1.1\r\nHost: a\r\n\r\n`,
      );
      expect(next.body).toBe("hello from /after");
      next.socket.destroy();
    } finally {
      cut.close();
    }
  });

  it("refuses an oversized request head without reaching the host", async () => {
    const p = await proxyFor([`127.0.0.1:${target.port}`], { maxHeaderBytes: 1024 });
    const { head } = await exchange(
      p.socketPath,
      `GET http://127.0.0.1:${target.port}/x HTTP/1.1\r\nHost: a\r\nX-Big: ${"a".repeat(4096)}\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1\.1 4\d\d/);
    expect(target.seen).toEqual([]);
  });

  it("ends every open tunnel and removes its socket on close", async () => {
    const p = await proxyFor([`127.0.0.1:${target.port}`]);
    const { socket, head } = await exchange(
      p.socketPath,
      `CONNECT 127.0.0.1:${target.port} HTTP/1.1\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    const closed = once(socket, "close");
    await p.close();
    await closed;
    await expect(stat(p.socketPath)).rejects.toMatchObject({ code: "ENOENT" });
  });
});
