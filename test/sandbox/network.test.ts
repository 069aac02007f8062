import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxRunner } from "../../tools/sandbox/runner.js";
import { harnessPolicy, openSandboxed, refused, type Sandboxed, SECRET } from "./harness.js";

/** A request through the sandbox's proxy variable, in bash alone (no curl needed). */
function viaProxy(url: string): string {
  const host = new URL(url).host;
  return `p=\${HTTP_PROXY#http://}; exec 3<>/dev/tcp/\${p%:*}/\${p##*:} && printf 'GET ${url} HTTP/1.0\\r\\nHost: ${host}\\r\\n\\r\\n' >&3 && cat <&3`;
}

describe("a sandboxed command has no network but what its grant allows", () => {
  const runner = createSandboxRunner();
  let s: Sandboxed;
  let listener: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    // a listener on the host's loopback, as the server's own API would be
    listener = createServer((_req, res) => {
      hits++;
      res.end(SECRET);
    });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    port = (listener.address() as AddressInfo).port;
    s = await openSandboxed({
      runner,
      policy: harnessPolicy({
        grants: {
          default: { read: true, write: true, exec: true, model: true, net: [], tree: ["/"] },
          runs: [
            { vid: "net-all", grant: { net: ["*"] } },
            { vid: "net-local", grant: { net: [`127.0.0.1:${port}`] } },
          ],
        },
      }),
    });
  });
  afterAll(async () => {
    await new Promise((r) => listener.close(r));
    await s.close();
    await runner.close();
  });

  it("cannot reach a listener on the host's loopback (the server's port)", async () => {
    refused(await s.run(`exec 3<>/dev/tcp/127.0.0.1/${port}`), /Connection refused/);
    expect(hits).toBe(0);
  });

  it("cannot reach a host directly", async () => {
    refused(await s.run("exec 3<>/dev/tcp/192.0.2.1/80"), /Network is unreachable/);
  });

  it("without net, has no proxy either", async () => {
    const results = await s.run('echo "proxy=[$HTTP_PROXY]"');
    for (const r of results) expect(r.text).toContain("proxy=[]");
  });

  it("holding net, still cannot connect directly: only through the egress proxy", async () => {
    refused(await s.run(`exec 3<>/dev/tcp/127.0.0.1/${port}`, "net-all"), /Connection refused/);
    refused(await s.run("exec 3<>/dev/tcp/192.0.2.1/80", "net-all"), /Network is unreachable/);
    expect(hits).toBe(0);
  });

  it("holding net *, is refused the server's loopback through the proxy (a wildcard never matches it)", async () => {
    for (const r of await s.run(viaProxy(`http://127.0.0.1:${port}/v1/approvals`), "net-all")) {
      expect(r.text).toContain("403");
      expect(r.text).toContain("byteseek egress proxy: refused");
      expect(r.text).not.toContain(SECRET);
    }
    expect(hits).toBe(0);
  });

  it("reaches a granted host through the proxy, and is refused one not granted", async () => {
    for (const r of await s.run(viaProxy(`http://127.0.0.1:${port}/`), "net-local")) {
      expect(r.kind, r.text).toBe("ok");
      expect(r.text).toContain("200 OK");
      expect(r.text).toContain(SECRET);
    }
    expect(hits).toBe(2);
    for (const r of await s.run(viaProxy("http://192.0.2.1/"), "net-local")) {
      expect(r.text).toContain("403");
      expect(r.text).toContain("byteseek egress proxy: refused");
    }
  });
});
