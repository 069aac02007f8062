import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../server/app.js";
import { createEtcdTree } from "../../tree/etcd/index.js";
import type { Tree } from "../../tree/types.js";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";

// Two byteseek HTTP servers, each with its own etcd client, sharing one etcd: a load-balanced pair.
let etcd: EtcdCluster;
const servers: Array<{ app: App; tree: Tree; url: string }> = [];

beforeAll(async () => {
  etcd = await startEtcd();
  for (let i = 0; i < 2; i++) {
    const tree = await createEtcdTree({
      endpoints: etcd.endpoints,
      prefix: "http/",
      unavailableAfterMs: 500,
    });
    const app = await buildApp({ tree, logger: pino({ level: "silent" }), web: false, watchProgressMs: 200 });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    servers.push({ app, tree, url });
  }
}, 60_000);

afterAll(async () => {
  for (const s of servers) {
    await s.app.close();
    await s.tree.close();
  }
  await etcd?.remove();
});

/** Reads server-sent events until `done` says so; answers the `change` events' data. */
async function readChanges(res: Response, done: (changes: unknown[]) => boolean): Promise<unknown[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const changes: unknown[] = [];
  let buffer = "";
  try {
    while (!done(changes)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split("\n");
        if (!lines.includes("event: change")) continue;
        const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
        changes.push(JSON.parse(data.join("\n")));
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return changes;
}

describe("two byteseek servers on one etcd", () => {
  it("serves a PUT on A to a GET on B, and to a watch on B", async () => {
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const before = Number((await fetch(`${b.url}/healthz`)).headers.get("x-byteseek-revision") ?? 0);
    const watch = await fetch(`${b.url}/v1/watch/byteseek/tools/?since=${before}`);
    expect(watch.status).toBe(200);
    const seen = readChanges(watch, (changes) =>
      JSON.stringify(changes).includes("/byteseek/tools/demo.echo"),
    );
    const declaration = { name: "demo.echo", description: "echoes", snippet: "echo text back" };
    const put = await fetch(`${a.url}/v1/tree/byteseek/tools/demo.echo`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "json", value: declaration }),
    });
    expect(put.status).toBeLessThan(300);
    const got = await fetch(`${b.url}/v1/tree/byteseek/tools/demo.echo`);
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({
      key: "/byteseek/tools/demo.echo",
      kind: "json",
      value: declaration,
      version: 1,
    });
    const changes = await seen;
    expect(JSON.stringify(changes)).toContain("/byteseek/tools/demo.echo");
  });

  it("answers ?consistency=linearizable with a quorum read, and says which revision answered", async () => {
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const put = (value: string) =>
      fetch(`${a.url}/v1/tree/consistency/key`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(value),
      }).then(async (r) => (await r.json()) as { rev: number });
    await put("first");
    expect((await fetch(`${b.url}/v1/tree/consistency/key`)).status).toBe(200); // now in B's cache
    const second = await put("second");
    const res = await fetch(`${b.url}/v1/tree/consistency/key?consistency=linearizable`);
    expect(await res.json()).toMatchObject({ value: "second", modRev: second.rev });
    expect(Number(res.headers.get("x-byteseek-revision"))).toBeGreaterThanOrEqual(second.rev);
    const bad = await fetch(`${b.url}/v1/tree/consistency/key?consistency=eventual`);
    expect(bad.status).toBe(400);
  });

  it("answers 503 TREE_UNAVAILABLE while etcd is down, and serves again once it is back", async () => {
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    await fetch(`${a.url}/v1/tree/outage/key`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify("before"),
    });
    const member = etcd.members[0]!;
    await member.stop();
    for (const res of [
      await fetch(`${a.url}/v1/tree/outage/key`),
      await fetch(`${b.url}/v1/tree/outage/`, {
        method: "POST",
        body: JSON.stringify(1),
        headers: { "content-type": "application/json" },
      }),
    ]) {
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: { code: "TREE_UNAVAILABLE" } });
    }
    await member.start();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await fetch(`${b.url}/v1/tree/outage/key`)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });
});
