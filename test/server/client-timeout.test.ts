/**
 * The HTTP tree's bound on a silent server (tree/http/silence.ts): a request to a server that takes
 * the connection and never answers fails with TREE_TIMEOUT on both transports; a watch keeps a
 * stream its heartbeat keeps alive, and drops and resumes one that goes silent. Real sockets on
 * loopback: a server that says nothing (or stops midway), a real byteseek server.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TreeError } from "../../tree/errors.js";
import { createHttpTree } from "../../tree/http/index.js";
import type { WatchBatch } from "../../tree/types.js";
import { str } from "../../tree/value.js";
import { eventually, startTestServer } from "./helpers.js";

/** A loopback server whose connections get `onConnection`'s treatment (by default: nothing, ever). */
async function rawServer(onConnection: (socket: Socket, n: number) => void = () => {}) {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    onConnection(socket, ++count);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => count,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((done) => server.close(done));
    },
  };
}

/** The first request's head on `socket` (its lines), once it has all arrived. */
function requestHead(socket: Socket): Promise<string[]> {
  return new Promise((resolve) => {
    let seen = "";
    socket.on("data", (chunk: Buffer) => {
      seen += chunk.toString("latin1");
      const end = seen.indexOf("\r\n\r\n");
      if (end >= 0) resolve(seen.slice(0, end).split("\r\n"));
    });
  });
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

describe("the HTTP tree's bound on a server that takes the connection and says nothing", () => {
  let silent: Awaited<ReturnType<typeof rawServer>>;
  beforeAll(async () => {
    silent = await rawServer();
  });
  afterAll(() => silent.close());

  for (const transport of ["node", "undici"] as const) {
    it(`fails a read with TREE_TIMEOUT, saying what to check and which setting to raise (${transport})`, async () => {
      const client = createHttpTree({ url: silent.url, transport, timeoutMs: 200 });
      // Before the bound, this waited forever (the test's own timeout).
      const err = await caught(client.get("/a"));
      expect(err).toBeInstanceOf(TreeError);
      expect(err).toMatchObject({
        code: "TREE_TIMEOUT",
        details: { timeoutMs: 200, setting: "BYTESEEK_CLIENT_TIMEOUT" },
      });
      const message = (err as Error).message;
      expect(message).toContain(
        `the byteseek server at ${silent.url}/ did not answer GET /v1/tree/a within 0.2 s`,
      );
      expect(message).toMatch(/check that it is running .*BYTESEEK_CLIENT_TIMEOUT=<ms> \(now 200\)$/);
      await client.close();
    });
  }

  it("says of a write that timed out that its change may or may not have been made", async () => {
    const client = createHttpTree({ url: silent.url, timeoutMs: 200 });
    const err = await caught(client.set("/a", str("v")));
    expect(err).toMatchObject({
      code: "TREE_TIMEOUT",
      message: expect.stringMatching(
        /did not answer PUT \/v1\/tree\/a within 0\.2 s: .*the change may or may not have been made: read it back/,
      ),
    });
    await client.close();
  });

  it("fails an answer whose body stops midway, and does not cut one that keeps coming", async () => {
    // A head promising 64 bytes: the first connection sends half and stops; the second sends
    // them in pieces, each sooner than the bound but all together later than it.
    const body = JSON.stringify({ key: "/slow", kind: "char/utf8", value: "x".repeat(8) }).padEnd(64);
    const stalling = await rawServer(async (socket, n) => {
      await requestHead(socket);
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
      );
      if (n === 1) return void socket.write(body.slice(0, 32));
      for (let i = 0; i < body.length; i += 16) {
        socket.write(body.slice(i, i + 16));
        await new Promise((r) => setTimeout(r, 100));
      }
    });
    const client = createHttpTree({ url: stalling.url, timeoutMs: 250, connections: 1 });
    expect(await caught(client.get("/slow"))).toMatchObject({ code: "TREE_TIMEOUT" });
    expect(await client.get("/slow")).toMatchObject({ key: "/slow", value: { kind: "char/utf8" } });
    await client.close();
    await stalling.close();
  });
});

describe("the HTTP tree's watch and the server's heartbeat", () => {
  it("keeps following a quiet watch whose progress events keep coming, on one connection", async () => {
    const s = await startTestServer({ watchProgressMs: 50 });
    let watchConnections = 0;
    s.app.server.on("request", (req: { url?: string }) => {
      if (req.url?.startsWith("/v1/watch/")) watchConnections++;
    });
    const client = createHttpTree({ url: s.url, timeoutMs: 150 });
    const got: WatchBatch[] = [];
    const ac = new AbortController();
    const following = (async () => {
      for await (const b of client.watch("/quiet/", { signal: ac.signal })) got.push(b);
    })();
    await eventually(() => watchConnections === 1, "the watch to connect");
    // quiet for several times the bound: only the heartbeat keeps it
    await new Promise((r) => setTimeout(r, 500));
    const w = await s.tree.set("/quiet/k", str("v"));
    await eventually(() => got.length === 1, "the write to be followed");
    expect(got[0]?.rev).toBe(w.rev);
    expect(watchConnections).toBe(1);
    ac.abort();
    await following;
    await client.close();
    await s.close();
  });

  for (const transport of ["node", "undici"] as const) {
    it(`drops a watch's stream that goes silent past its heartbeat and resumes after the last change (${transport})`, async () => {
      const progress = (rev: number) => `event: progress\ndata: {"rev":${rev}}\n\n`;
      const change = (rev: number) =>
        `id: ${rev}\nevent: change\ndata: ${JSON.stringify({ rev, events: [{ type: "put", key: `/s/${rev}`, kind: "char/utf8", value: "v", rev, prevRev: 0, version: 1 }] })}\n\n`;
      const heads: string[][] = [];
      const sse = await rawServer(async (socket, n) => {
        heads.push(await requestHead(socket));
        socket.write(
          "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-byteseek-progress-ms: 50\r\n\r\n" +
            progress(4) +
            change(n === 1 ? 5 : 6),
        );
        // then nothing: not a byte, not a heartbeat, the connection left open
      });
      const client = createHttpTree({ url: sse.url, timeoutMs: 100, transport });
      const got: number[] = [];
      const ac = new AbortController();
      const following = (async () => {
        for await (const b of client.watch("/s/", { signal: ac.signal })) got.push(b.rev);
      })();
      // Before the bound, the first stream's silence was waited on forever.
      await eventually(() => got.length === 2, "the watch to reconnect and read the next change");
      expect(got).toEqual([5, 6]);
      expect(heads[1]).toContain("last-event-id: 5");
      ac.abort();
      await following;
      await client.close();
      await sse.close();
    });
  }

  it("ends a watch whose server takes each connection and never answers, once its patience is spent, telling its reader once", async () => {
    const silent = await rawServer();
    const lost: Array<{ server: string; reason: string; patienceMs: number | undefined }> = [];
    const client = createHttpTree({
      url: silent.url,
      timeoutMs: 100,
      watchPatienceMs: 300,
      maxReconnectDelayMs: 50,
      onWatchLost: (l) => lost.push(l),
    });
    const err = await caught(
      (async () => {
        for await (const _ of client.watch("/never/", { fromRev: 7 })) {
          // nothing comes
        }
      })(),
    );
    expect(err).toMatchObject({
      code: "TREE_UNAVAILABLE",
      details: { resumeFrom: 7 },
      cause: { code: "TREE_TIMEOUT" },
    });
    expect(lost).toEqual([
      { server: `the byteseek server at ${silent.url}/`, reason: "no answer within 0.1 s", patienceMs: 300 },
    ]);
    expect(silent.connections()).toBeGreaterThan(1);
    await client.close();
    await silent.close();
  });
});
