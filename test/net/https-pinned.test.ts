/**
 * An `http` tool's https call over the connection it opens early (tools/net/pinned-connection.ts,
 * tools/impl/http.ts): the TLS connection is made while the call's started record is stored, the
 * request goes on that very connection once the record is, with the record's Idempotency-Key; the
 * server's certificate is checked on it (for the URL's name, by a trusted CA), and a kept connection
 * serves the next call of the same tool in the same run only.
 *
 * The certificates are made here with openssl: a CA, a certificate it signed for localhost, one it
 * signed for another name, and one for localhost signed by an unrelated CA. The calls run in a child
 * process (test/fixtures/https-caller.mjs, the compiled modules in dist/) started with
 * NODE_EXTRA_CA_CERTS naming the CA, which Node reads only at start: that is how a server trusts a
 * private CA, and the code under test has no CA option of its own.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { TLSSocket } from "node:tls";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Leaf, makeCertificates } from "../helpers/certificates.js";

const compiled = fileURLToPath(new URL("../../dist/tools/impl/http.js", import.meta.url));
const fixture = fileURLToPath(new URL("../fixtures/https-caller.mjs", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "byteseek-https-"));
const file = (name: string) => join(dir, name);
/** Two CAs (`ca` the trusted one), and `name.pem`/`name.key` for each server certificate. */
const LEAVES: Leaf[] = [
  { name: "localhost", ca: "ca", altNames: "DNS:localhost,IP:127.0.0.1" },
  { name: "elsewhere", ca: "ca", altNames: "DNS:elsewhere.test" },
  { name: "untrusted", ca: "other-ca", altNames: "DNS:localhost,IP:127.0.0.1" },
];

/** What a server saw: its TLS connections (handshakes completed) and its requests. */
interface Seen {
  tls: TLSSocket[];
  /** Each request: the call (its body names it), its connection, its Idempotency-Key, and whether its intent had been released. */
  requests: Array<{ call: string; tls: TLSSocket; key: string | undefined; released: boolean }>;
}

/** A loopback https server presenting `name`'s certificate; `released` says which calls were let through. */
async function tlsServer(name: string, released: ReadonlySet<string>) {
  const seen: Seen = { tls: [], requests: [] };
  let arrived: (call: string) => void = () => {};
  const server: Server = createServer(
    { cert: readFileSync(file(`${name}.pem`)), key: readFileSync(file(`${name}.key`)) },
    (req, res) => {
      // the calls let through when the request began: its body (which names its call) comes after
      const releasedThen = new Set(released);
      const key = req.headers["idempotency-key"];
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      req.on("end", () => {
        const call = String((JSON.parse(body) as { call?: unknown }).call);
        const tls = req.socket as TLSSocket;
        seen.requests.push({
          call,
          tls,
          key: key === undefined ? undefined : String(key),
          released: releasedThen.has(call),
        });
        arrived(call);
        res.end(`{"answered":"${call}"}`);
      });
    },
  );
  /** Set: the next TLS connection is closed by this server once made, before any request. */
  let drop: ((closed: Promise<void>) => void) | undefined;
  server.on("secureConnection", (socket: TLSSocket) => {
    seen.tls.push(socket);
    if (drop === undefined) return;
    drop(new Promise((resolve) => socket.once("close", () => resolve())));
    drop = undefined;
    socket.end();
  });
  server.on("tlsClientError", () => {}); // a client that refused this server's certificate
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    seen,
    port,
    /** The one tool's URL (every call POSTs its id to it), and the grant that lets a run reach it. */
    url: `https://localhost:${port}/tool`,
    grant: `localhost:${port}`,
    /** The same tool at the server's address: no server name is sent, the certificate must name the address. */
    byAddress: { url: `https://127.0.0.1:${port}/tool`, grant: `127.0.0.1:${port}` },
    /** Resolves when a request of `call` arrives. */
    request: (call: string) =>
      new Promise<"request">((resolve) => {
        const before = arrived;
        arrived = (c) => {
          before(c);
          if (c === call) resolve("request");
        };
      }),
    /** Resolves once the server has seen `count` TLS connections. */
    async tlsConnections(count: number) {
      while (seen.tls.length < count) await new Promise((r) => server.once("secureConnection", r));
    },
    /**
     * Closes the next TLS connection once made; resolves when it is closed, the client's end too
     * (this side's end waits for the client's, which the client sends once its socket is done).
     */
    dropNext: () =>
      new Promise<Promise<void>>((resolve) => {
        drop = resolve;
      }).then((closed) => closed),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Report =
  | { id: string; event: "intent" | "pong" }
  | { id: string; event: "done"; text: string }
  | { id: string; event: "error"; code: string; message: string; details: Record<string, unknown> };

/** The child process making the calls: lines in, reports out (see the fixture's header). */
function startCaller(ca: string) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [fixture], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: ca },
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const reports = new Map<string, Report[]>();
  const waiters = new Map<string, (r: Report) => void>();
  let gone: Error | undefined;
  const fail = new Set<(err: Error) => void>();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const report = JSON.parse(line) as Report;
    const waiter = waiters.get(report.id);
    if (waiter) {
      waiters.delete(report.id);
      waiter(report);
    } else reports.set(report.id, [...(reports.get(report.id) ?? []), report]);
  });
  child.on("exit", (code) => {
    gone = new Error(`the caller exited (${code}): ${stderr}`);
    for (const f of fail) f(gone);
  });
  const send = (msg: object) => child.stdin.write(`${JSON.stringify(msg)}\n`);
  /** The calls whose intent the test released: a request of any other reached the server too early. */
  const released = new Set<string>();
  /** The next report of call `id`. */
  const next = (id: string) =>
    new Promise<Report>((resolve, reject) => {
      const queued = reports.get(id)?.shift();
      if (queued) return resolve(queued);
      if (gone) return reject(gone);
      const onGone = (err: Error) => reject(err);
      fail.add(onGone);
      waiters.set(id, (r) => {
        fail.delete(onGone);
        resolve(r);
      });
    });
  return {
    released,
    next,
    /** Starts a call; `durable`: the key its intent resolves with at once (else it waits for `release`). */
    call(id: string, to: { url: string; grant: string }, options: { durable?: string; scope?: string } = {}) {
      if (options.durable !== undefined) released.add(id);
      // an entry naming the host: the only kind that may reach loopback
      send({ op: "call", id, url: to.url, allowed: [to.grant], ...options });
    },
    release(id: string, key: string) {
      released.add(id);
      send({ op: "durable", id, key });
    },
    /** A round trip: everything the caller did for the lines before has been done (and written). */
    async ping(id: string) {
      send({ op: "ping", id });
      expect(await next(id)).toMatchObject({ event: "pong" });
    },
    /** The call's end (its intent asked or not). */
    async result(id: string): Promise<Report> {
      for (;;) {
        const r = await next(id);
        if (r.event === "done" || r.event === "error") return r;
      }
    },
    async stop() {
      if (gone) return;
      const exited = new Promise((r) => child.once("exit", r));
      send({ op: "exit" });
      await exited;
    },
  };
}

describe("https http-impl calls over the connection opened early", () => {
  let caller: ReturnType<typeof startCaller>;
  let good: Awaited<ReturnType<typeof tlsServer>>;
  let elsewhere: Awaited<ReturnType<typeof tlsServer>>;
  let untrusted: Awaited<ReturnType<typeof tlsServer>>;

  beforeAll(async () => {
    if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run \`npm run build\` first`);
    makeCertificates(dir, LEAVES);
    caller = startCaller(file("ca.pem"));
    good = await tlsServer("localhost", caller.released);
    elsewhere = await tlsServer("elsewhere", caller.released);
    untrusted = await tlsServer("untrusted", caller.released);
  });
  afterAll(async () => {
    await caller?.stop();
    await Promise.all([good, elsewhere, untrusted].map((s) => s?.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("makes one TLS connection and sends its request on it", async () => {
    const before = good.seen.tls.length;
    caller.call("one", good, { durable: "vone/1" });
    expect(await caller.result("one")).toEqual({ id: "one", event: "done", text: '{"answered":"one"}' });
    expect(good.seen.tls).toHaveLength(before + 1);
    const request = good.seen.requests.filter((r) => r.call === "one");
    expect(request).toHaveLength(1);
    expect(request[0]?.tls).toBe(good.seen.tls[before]);
  });

  it("holds its request until the intent is stored, its TLS connection already made, then sends the stored intent's Idempotency-Key", async () => {
    const before = good.seen.tls.length;
    caller.call("held", good);
    // a request that came before the intent was asked for fails here at once
    expect(await Promise.race([caller.next("held"), good.request("held")])).toEqual({
      id: "held",
      event: "intent",
    });
    await good.tlsConnections(before + 1);
    // whatever the caller wrote before answering this has reached the server
    await caller.ping("held");
    await new Promise((r) => setImmediate(r));
    expect(good.seen.requests.map((r) => r.call)).not.toContain("held");

    caller.release("held", "vheld/7");
    expect(await caller.result("held")).toMatchObject({ event: "done", text: '{"answered":"held"}' });
    const sent = good.seen.requests.filter((r) => r.call === "held");
    expect(sent.map((r) => ({ key: r.key, released: r.released }))).toEqual([
      { key: "vheld/7", released: true },
    ]);
    expect(good.seen.tls).toHaveLength(before + 1);
    expect(sent[0]?.tls).toBe(good.seen.tls[before]);
  });

  it("sends its request on a new connection when the server closed the one opened early while the intent was stored", async () => {
    const before = good.seen.tls.length;
    const dropped = good.dropNext();
    caller.call("dropped", good);
    expect(await caller.next("dropped")).toMatchObject({ event: "intent" });
    await dropped;
    await caller.ping("dropped");
    caller.release("dropped", "vdropped/1");
    expect(await caller.result("dropped")).toMatchObject({ event: "done", text: '{"answered":"dropped"}' });
    expect(good.seen.tls).toHaveLength(before + 2);
    expect(good.seen.requests.find((r) => r.call === "dropped")?.tls).toBe(good.seen.tls[before + 1]);
  });

  /** How a call answers a refused certificate: Node's `reason` (a pattern) and `tls` code, and what to do. */
  function refusal(origin: string, reason: string, tls: string) {
    return {
      event: "error",
      code: "failed",
      message: expect.stringMatching(
        new RegExp(
          `^request to ${origin.replaceAll(".", "\\.")} failed: its TLS certificate was refused \\(.*${reason}.*\\), so nothing was sent\\. .*calling again will not help`,
        ),
      ),
      details: expect.objectContaining({ tls }),
    };
  }

  it("refuses a server whose certificate names another host: the call fails unsent, saying why", async () => {
    caller.call("elsewhere", elsewhere, { durable: "velsewhere/1" });
    expect(await caller.result("elsewhere")).toMatchObject(
      refusal(
        `https://localhost:${elsewhere.port}`,
        "altnames: DNS:elsewhere\\.test",
        "ERR_TLS_CERT_ALTNAME_INVALID",
      ),
    );
    expect(elsewhere.seen.requests).toEqual([]);
    expect(elsewhere.seen.tls).toEqual([]);
  });

  it("refuses a server whose certificate an untrusted CA signed: the call fails unsent, saying why", async () => {
    caller.call("untrusted", untrusted, { durable: "vuntrusted/1" });
    expect(await caller.result("untrusted")).toMatchObject(
      refusal(
        `https://localhost:${untrusted.port}`,
        "unable to verify the first certificate",
        "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      ),
    );
    expect(untrusted.seen.requests).toEqual([]);
    expect(untrusted.seen.tls).toEqual([]);
  });

  it("checks the certificate against the address for an https URL naming an IP, on one connection", async () => {
    const before = good.seen.tls.length;
    caller.call("by-ip", good.byAddress, { durable: "vbyip/1" });
    expect(await caller.result("by-ip")).toMatchObject({ event: "done", text: '{"answered":"by-ip"}' });
    expect(good.seen.tls).toHaveLength(before + 1);
    expect(good.seen.requests.find((r) => r.call === "by-ip")?.tls).toBe(good.seen.tls[before]);

    caller.call("by-ip-elsewhere", elsewhere.byAddress, { durable: "vbyip/2" });
    expect(await caller.result("by-ip-elsewhere")).toMatchObject(
      refusal(`https://127.0.0.1:${elsewhere.port}`, "IP: 127\\.0\\.0\\.1", "ERR_TLS_CERT_ALTNAME_INVALID"),
    );
    expect(elsewhere.seen.requests).toEqual([]);
  });

  it("reuses the kept TLS connection for the next call of the same tool in the same run, not for another run", async () => {
    const before = good.seen.tls.length;
    for (const id of ["runA-1", "runA-2"]) {
      caller.call(id, good, { durable: `${id}/1`, scope: "runA" });
      expect(await caller.result(id)).toMatchObject({ event: "done" });
    }
    expect(good.seen.tls).toHaveLength(before + 1);
    caller.call("runB-1", good, { durable: "runB-1/1", scope: "runB" });
    expect(await caller.result("runB-1")).toMatchObject({ event: "done" });
    expect(good.seen.tls).toHaveLength(before + 2);
    const on = (call: string) => good.seen.requests.find((r) => r.call === call)?.tls;
    expect(on("runA-1")).toBe(good.seen.tls[before]);
    expect(on("runA-2")).toBe(good.seen.tls[before]);
    expect(on("runB-1")).toBe(good.seen.tls[before + 1]);
  });
});
