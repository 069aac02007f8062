/**
 * Connections kept between http calls (tools/net/kept-connections.ts): the next call of the same
 * tool in the same run skips its connect, but only to the address its own check gave, only
 * after its own run's policy allowed the host, and never with a connection whose answer was cut.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { HostLookup } from "../../tools/net/host-rules.js";
import { createKeptConnections } from "../../tools/net/kept-connections.js";
import type { PinnedConnection } from "../../tools/net/pinned-connection.js";
import { createRuntime } from "../../tools/runtime.js";
import { declare, grantEverything, type Harness, harness, setPolicy, silent } from "../tools/helpers.js";

/** A loopback server on `host`: its connections (open or closed) and the runs its requests came from. */
async function countingServer(host: string, port = 0) {
  const seen = { connections: [] as Array<{ closed: boolean }>, runs: [] as string[] };
  const server = createServer((req, res) => {
    seen.runs.push(String(req.headers["idempotency-key"]).split("/")[0] ?? "");
    req.resume();
    // past the 50 KB an http call reads: the call cuts the answer short
    req.on("end", () => res.end(req.url === "/big" ? "x".repeat(80_000) : '{"count":1}'));
  });
  server.on("connection", (socket) => {
    const connection = { closed: false };
    seen.connections.push(connection);
    socket.on("close", () => {
      connection.closed = true;
    });
  });
  server.listen(port, host);
  await once(server, "listening");
  return { server, seen, port: (server.address() as AddressInfo).port };
}

describe("connections kept between http calls", () => {
  let h: Harness;
  let a: Awaited<ReturnType<typeof countingServer>>;
  let b: Awaited<ReturnType<typeof countingServer>>;
  /** What flip.test resolves to (there is no DNS here). */
  const answer = { address: "127.0.0.1" };
  const lookup: HostLookup = async (host) =>
    host === "flip.test" ? [{ address: answer.address, family: 4 }] : [];
  let grant: string[] = [];

  beforeAll(async () => {
    a = await countingServer("127.0.0.1");
    // the same port on another loopback address: where a second DNS answer for the name points
    b = await countingServer("127.0.0.2", a.port);
    h = await harness("memory", { lookup });
    grant = [`flip.test:${a.port}`];
    await grantEverything(h.tree, grant);
    const add = { kind: "http", url: `http://flip.test:${a.port}/add`, method: "POST" };
    for (const name of ["count.one", "count.two"])
      await declare(h.tree, { name, description: "adds one", params: { type: "object" }, impl: add });
    await declare(h.tree, {
      name: "count.big",
      description: "answers too much",
      params: { type: "object" },
      impl: { ...add, url: `http://flip.test:${a.port}/big` },
    });
  });
  afterAll(async () => {
    await h.dispose();
    a.server.close();
    b.server.close();
  });

  async function ok(name: string, vid: string) {
    const r = await h.runtime.call(name, {}, { vid });
    expect(r.kind, r.text).toBe("ok");
  }

  it("sends the next calls of the same tool in the same run on one connection", async () => {
    const before = a.seen.connections.length;
    for (let i = 0; i < 3; i++) await ok("count.one", "kept1");
    expect(a.seen.runs.slice(-3)).toEqual(["kept1", "kept1", "kept1"]);
    expect(a.seen.connections).toHaveLength(before + 1);
  });

  it("opens a new connection for another run, and for another tool of the same run", async () => {
    await ok("count.one", "kept2");
    const before = a.seen.connections.length;
    await ok("count.one", "kept3");
    expect(a.seen.connections).toHaveLength(before + 1);
    await ok("count.two", "kept3");
    expect(a.seen.connections).toHaveLength(before + 2);
  });

  it("connects to the address a new DNS answer gives, never through the connection kept to the old one", async () => {
    await ok("count.one", "kept4");
    const served = a.seen.runs.length;
    answer.address = "127.0.0.2";
    try {
      await ok("count.one", "kept4");
    } finally {
      answer.address = "127.0.0.1";
    }
    expect(b.seen.runs).toEqual(["kept4"]);
    expect(a.seen.runs).toHaveLength(served);
  });

  it("refuses a run whose grant lacks the host though another run keeps a connection to it, and a run whose grant was taken back", async () => {
    const noNet = { read: true, write: true, exec: true, model: true, net: [], tree: ["/"] };
    await setPolicy(h.tree, { grants: { default: noNet, runs: [{ vid: "kept5", grant: { net: grant } }] } });
    try {
      await ok("count.one", "kept5");
      const served = a.seen.runs.length;
      const other = await h.runtime.call("count.one", {}, { vid: "kept6" });
      expect(other).toMatchObject({ isError: true, kind: "denied" });
      await setPolicy(h.tree, { grants: { default: noNet } });
      const revoked = await h.runtime.call("count.one", {}, { vid: "kept5" });
      expect(revoked).toMatchObject({ isError: true, kind: "denied" });
      expect(a.seen.runs).toHaveLength(served);
    } finally {
      await grantEverything(h.tree, grant);
    }
  });

  it("keeps no connection whose answer was cut short", async () => {
    const before = a.seen.connections.length;
    const r = await h.runtime.call("count.big", {}, { vid: "kept7" });
    expect(r.text).toContain("response truncated");
    await vi.waitFor(() => expect(a.seen.connections[before]?.closed).toBe(true), { timeout: 10_000 });
    await ok("count.big", "kept7");
    expect(a.seen.connections).toHaveLength(before + 2);
  });

  it("closes the connections it keeps when the runtime closes", async () => {
    const runtime = createRuntime({
      tree: h.tree,
      builtins: h.builtins,
      logger: silent,
      workspace: h.workspace,
      lookup,
    });
    const before = a.seen.connections.length;
    expect((await runtime.call("count.one", {}, { vid: "kept8" })).kind).toBe("ok");
    expect(a.seen.connections[before]?.closed).toBe(false);
    await runtime.close();
    await vi.waitFor(() => expect(a.seen.connections[before]?.closed).toBe(true), { timeout: 10_000 });
  });
});

describe("createKeptConnections", () => {
  /** A connection that only notes that it was closed. */
  const fake = () => {
    const c = { closed: false };
    const connection = {
      opened: Promise.resolve(),
      dispatcher: undefined as unknown as PinnedConnection["dispatcher"],
      async close() {
        c.closed = true;
      },
    };
    return Object.assign(c, { connection });
  };

  it("hands a kept connection to one taker, keeps one per key, at most `max`, and none once closed", async () => {
    const kept = createKeptConnections({ max: 2 });
    const [one, two, three, four, late] = [fake(), fake(), fake(), fake(), fake()];
    await kept.keep("a", one.connection);
    await kept.keep("a", two.connection);
    expect(two.closed).toBe(true);
    expect(kept.take("a")).toBe(one.connection);
    expect(kept.take("a")).toBeUndefined();
    await kept.keep("a", one.connection);
    await kept.keep("b", three.connection);
    await kept.keep("c", four.connection);
    expect(four.closed).toBe(true);
    await kept.close();
    expect([one.closed, three.closed]).toEqual([true, true]);
    expect(kept.take("b")).toBeUndefined();
    await kept.keep("d", late.connection);
    expect(late.closed).toBe(true);
  });

  it("closes a connection left idle", async () => {
    const kept = createKeptConnections({ idleMs: 1 });
    const idle = fake();
    await kept.keep("a", idle.connection);
    await vi.waitFor(() => expect(idle.closed).toBe(true));
    expect(kept.take("a")).toBeUndefined();
  });
});
