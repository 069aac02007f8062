import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { TreeError } from "../../tree/errors.js";
import { createHttpTree } from "../../tree/http/index.js";
import type { WatchBatch } from "../../tree/types.js";
import { int64, str } from "../../tree/value.js";
import { eventually, startTestServer, type TestServer } from "./helpers.js";

interface SseEvent {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

/** Opens an SSE stream and collects its events until `stop` is called. */
async function openStream(url: string, headers: Record<string, string> = {}) {
  const ac = new AbortController();
  const res = await request(url, { headers: { accept: "text/event-stream", ...headers }, signal: ac.signal });
  const events: SseEvent[] = [];
  let buf = "";
  const done = (async () => {
    try {
      for await (const chunk of res.body) {
        buf += chunk.toString();
        let end = buf.indexOf("\n\n");
        while (end >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const ev: Partial<SseEvent> = {};
          for (const line of block.split("\n")) {
            const [field, ...rest] = line.split(": ");
            if (field === "event") ev.event = rest.join(": ");
            if (field === "id") ev.id = rest.join(": ");
            if (field === "data") ev.data = JSON.parse(rest.join(": "));
          }
          if (ev.event) events.push(ev as SseEvent);
          end = buf.indexOf("\n\n");
        }
      }
    } catch {
      // aborted by stop()
    }
  })();
  return {
    res,
    events,
    changes: () => events.filter((e) => e.event === "change"),
    async stop() {
      ac.abort();
      await done;
    },
    done,
  };
}

let s: TestServer;
afterEach(async () => {
  await s?.close();
});

describe("GET /v1/watch/<prefix>", () => {
  it("streams one change event per revision, with the revision as the id, only under the prefix", async () => {
    s = await startTestServer();
    const w = await openStream(`${s.url}/v1/watch/w/`);
    expect(w.res.statusCode).toBe(200);
    expect(w.res.headers["content-type"]).toMatch(/text\/event-stream/);
    expect(w.res.headers["x-byteseek-revision"]).toBeDefined();
    expect(w.res.headers["x-byteseek-compacted-revision"]).toBe(String(s.tree.compactedRev()));
    expect(w.res.headers["x-request-id"]).toBeDefined();
    await eventually(() => w.events.some((e) => e.event === "progress"), "the first progress event");
    await s.tree.set("/w/a", int64(1));
    await s.tree.set("/elsewhere", int64(1));
    await s.tree.set("/w/b", str("b"));
    await eventually(() => w.changes().length === 2, "two changes");
    const [a, b] = w.changes();
    expect(a?.id).toBe(String(a?.data.rev));
    expect(a?.data.events).toContainEqual(
      expect.objectContaining({ type: "put", key: "/w/a", kind: "int64", value: 1 }),
    );
    expect(b?.data.events).toEqual([expect.objectContaining({ key: "/w/b", value: "b" })]);
    expect(JSON.stringify(w.events)).not.toContain("/elsewhere");
    await w.stop();
  });

  it("replays exactly what a client missed when it reconnects with Last-Event-ID", async () => {
    s = await startTestServer();
    const first = await openStream(`${s.url}/v1/watch/r/`);
    await eventually(() => first.events.length > 0, "connected");
    await s.tree.set("/r/1", int64(1));
    await s.tree.set("/r/2", int64(2));
    await eventually(() => first.changes().length === 2, "two changes");
    const lastId = first.changes()[1]!.id!;
    await first.stop();
    await s.tree.set("/r/3", int64(3));
    await s.tree.set("/x", int64(0));
    await s.tree.set("/r/4", int64(4));
    const again = await openStream(`${s.url}/v1/watch/r/`, { "last-event-id": lastId });
    await eventually(() => again.changes().length === 2, "the missed changes");
    expect(again.changes().map((e) => (e.data.events as Array<{ key: string }>).at(-1)!.key)).toEqual([
      "/r/3",
      "/r/4",
    ]);
    await s.tree.set("/r/5", int64(5));
    await eventually(() => again.changes().length === 3, "the live change after the replay");
    await again.stop();
  });

  it("replays from ?since=REV (changes after REV)", async () => {
    s = await startTestServer();
    const r1 = await s.tree.set("/s/a", int64(1));
    await s.tree.set("/s/b", int64(2));
    const w = await openStream(`${s.url}/v1/watch/s/?since=${r1.rev}`);
    await eventually(() => w.changes().length === 1, "one replayed change");
    expect((w.changes()[0]!.data.events as Array<{ key: string }>)[0]!.key).toBe("/s/b");
    await w.stop();
  });

  it("sends periodic progress events carrying the current revision", async () => {
    s = await startTestServer({ watchProgressMs: 20 });
    const w = await openStream(`${s.url}/v1/watch/p/`);
    await s.tree.set("/other", int64(1));
    await eventually(
      () => w.events.some((e) => e.event === "progress" && e.data.rev === s.tree.revision()),
      "a progress event with the current revision",
    );
    await w.stop();
  });

  it("tells the client to re-list when the revision is compacted, then ends the stream", async () => {
    s = await startTestServer({ tree: { retainRevisions: 3 } });
    for (let i = 0; i < 10; i++) await s.tree.set("/c/k", int64(i));
    const w = await openStream(`${s.url}/v1/watch/c/?since=1`);
    await w.done;
    const ev = w.events.find((e) => e.event === "compacted");
    expect(ev?.data).toMatchObject({ code: "TREE_COMPACTED", relistFrom: s.tree.revision() + 1 });
  });

  it("closes the watch when the client goes away", async () => {
    s = await startTestServer();
    const w = await openStream(`${s.url}/v1/watch/gone/`);
    await eventually(() => w.events.length > 0, "connected");
    await w.stop();
    await eventually(() => s.logs.lines.some((l) => l.msg === "watch ended"), "the server to end the watch");
  });

  it("refuses a bad prefix or Last-Event-ID with 400 before streaming", async () => {
    s = await startTestServer();
    const bad = await request(`${s.url}/v1/watch/a/%00/`);
    expect(bad.statusCode).toBe(400);
    expect(((await bad.body.json()) as { error: { code: string } }).error.code).toBe("TREE_INVALID_KEY");
    const badId = await request(`${s.url}/v1/watch/a/`, { headers: { "last-event-id": "abc" } });
    expect(badId.statusCode).toBe(400);
    await badId.body.text();
  });

  it("ends open watches when the server closes", async () => {
    s = await startTestServer();
    const w = await openStream(`${s.url}/v1/watch/z/`);
    await eventually(() => w.events.length > 0, "connected");
    await s.app.close();
    await w.done;
  });
});

describe("createHttpTree watch", () => {
  it("follows the stream and resumes after the server restarts on the same store", async () => {
    const { openTree } = await import("../../tree/index.js");
    const { buildApp } = await import("../../server/app.js");
    const { tempDir, captureLogger } = await import("./helpers.js");
    const dir = await tempDir();
    const start = async (port: number) => {
      const tree = await openTree({ backend: "classic", location: dir.path });
      const app = await buildApp({ tree, logger: captureLogger().logger, web: false });
      const url = await app.listen({ host: "127.0.0.1", port });
      return { tree, app, url, port: Number(new URL(url).port) };
    };
    let srv = await start(0);
    const client = createHttpTree({ url: srv.url, maxReconnectDelayMs: 50 });
    const got: WatchBatch[] = [];
    const ac = new AbortController();
    const following = (async () => {
      for await (const b of client.watch("/f/", { signal: ac.signal })) got.push(b);
    })();
    await eventually(async () => {
      await srv.tree.set("/f/ping", int64(0));
      return got.length > 0;
    }, "the watch to follow");
    await srv.tree.set("/f/last-before", int64(0));
    await eventually(
      () => got.some((b) => b.events.some((e) => e.key === "/f/last-before")),
      "the last change",
    );
    const seen = got.length;
    await srv.app.close();
    await srv.tree.close();
    // Written while no server is up: the client must get it once the server is back.
    const offline = await openTree({ backend: "classic", location: dir.path });
    await offline.set("/f/while-down", str("x"));
    await offline.close();
    srv = await start(srv.port);
    await srv.tree.set("/f/after", str("y"));
    await eventually(() => got.some((b) => b.events.some((e) => e.key === "/f/after")), "the new change");
    expect(got.slice(seen).flatMap((b) => b.events.map((e) => e.key))).toEqual(["/f/while-down", "/f/after"]);
    const revs = got.map((b) => b.rev);
    expect(new Set(revs).size).toBe(revs.length);
    ac.abort();
    await following;
    await client.close();
    await srv.app.close();
    await srv.tree.close();
    await dir.remove();
  });

  it("ends a watch whose server stays away beyond watchPatienceMs with TREE_UNAVAILABLE and the revision to go on from", async () => {
    const s = await startTestServer();
    const client = createHttpTree({ url: s.url, maxReconnectDelayMs: 50, watchPatienceMs: 300 });
    const got: WatchBatch[] = [];
    const following = (async () => {
      for await (const b of client.watch("/gone/")) got.push(b);
    })();
    await eventually(async () => {
      await s.tree.set("/gone/ping", int64(0));
      return got.length > 0;
    }, "the watch to follow");
    await s.close();
    const err = await following.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TreeError);
    expect(err).toMatchObject({
      code: "TREE_UNAVAILABLE",
      details: { resumeFrom: got.at(-1)!.rev + 1 },
      message: expect.stringMatching(/went away, and nothing answered there for 0\.3 s/),
    });
    await client.close();
  });
});
