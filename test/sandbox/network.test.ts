import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxRunner } from "../../tools/sandbox/runner.js";
import type { ToolResult } from "../../tools/types.js";
import { harnessPolicy, openSandboxed, type Sandboxed, SECRET } from "./harness.js";

function refused(results: ToolResult[], said: RegExp): void {
  for (const r of results) {
    expect(r.isError, r.text).toBe(true);
    expect(r.text).toMatch(said);
    expect(r.text).not.toContain(SECRET);
  }
}

describe("a sandboxed command has no network but what its grant allows", () => {
  const runner = createSandboxRunner();
  let s: Sandboxed;
  let listener: Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    s = await openSandboxed({
      runner,
      policy: harnessPolicy({
        grants: {
          default: { read: true, write: true, exec: true, model: true, net: [], tree: ["/"] },
          runs: [{ vid: "net-*", grant: { net: ["*"] } }],
        },
      }),
    });
    // a listener on the host's loopback, as the server's own API would be
    listener = createServer((_req, res) => {
      hits++;
      res.end(SECRET);
    });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    port = (listener.address() as AddressInfo).port;
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

  it("holding net, still gets no network until byteseek's egress proxy serves it (fail closed)", async () => {
    refused(await s.run(`exec 3<>/dev/tcp/127.0.0.1/${port}`, "net-all"), /Connection refused/);
    refused(await s.run("exec 3<>/dev/tcp/192.0.2.1/80", "net-all"), /Network is unreachable/);
    expect(hits).toBe(0);
  });
});
