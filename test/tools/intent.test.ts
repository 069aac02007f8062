/**
 * Intent before effect: a call that executes has its `started` record (arguments, declaration
 * pin, gate rule, side effect, file hashes) in the tree before it runs, and the same record
 * holds its result after; http impls send the record's idempotency key.
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEditTools } from "../../tools/edit/index.js";
import { recordsDir } from "../../tools/records/records.js";
import type { BuiltinTool } from "../../tools/types.js";
import { declare, grantEverything, type Harness, harness, recordAt, testBuiltins } from "./helpers.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

/** A built-in that reads its own record while it runs: what a process dying now would leave. */
function peekTool(seen: Array<Record<string, unknown>>): BuiltinTool {
  return {
    ref: "test.peek",
    declaration: {
      name: "test.peek",
      description: "reads its own record",
      params: { type: "object", properties: { n: { type: "number" } } },
      impl: { kind: "builtin", ref: "test.peek" },
    },
    async execute(_args, ctx) {
      const node = await ctx.tree.get(`/byteseek/tool/${ctx.idempotencyKey}`);
      if (node?.kind === "json") seen.push(node.value.value as Record<string, unknown>);
      return { text: "peeked" };
    },
  };
}

describe("intent records", () => {
  let h: Harness;
  const seen: Array<Record<string, unknown>> = [];
  const points: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    headers.push(req.headers);
    req.resume();
    req.on("end", () => res.end('{"ok":true}'));
  });
  let port = 0;

  beforeAll(async () => {
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
    h = await harness(
      "classic",
      {
        failpoint: (point, call) => {
          points.push(`${point}:${call.name}`);
        },
      },
      [...testBuiltins(), ...createEditTools(), peekTool(seen)],
    );
    await grantEverything(h.tree, [`127.0.0.1:${port}`]);
  });
  afterAll(async () => {
    await h.dispose();
    server.close();
  });

  it("stores the started record before the call runs and its result at the same key after", async () => {
    points.length = 0;
    const r = await h.runtime.call(
      "test.peek",
      { n: 1 },
      { vid: "intent1", origin: { message: 3, id: "c1" } },
    );
    expect(r.record).toBe("/byteseek/tool/intent1/0");
    expect(seen.at(-1)).toMatchObject({
      state: "started",
      name: "test.peek",
      args: { n: 1 },
      kind: "runtime",
      details: { code: "started" },
      sideEffect: "other",
      gate: { rule: expect.any(String) },
      decl: { key: "/byteseek/tools/test.peek", hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      origin: { message: 3, id: "c1" },
    });
    const done = await recordAt(h.tree, r.record!);
    expect(done).toMatchObject({
      state: "done",
      kind: "ok",
      text: "peeked",
      idempotencyKey: "intent1/0",
      sideEffect: "other",
      origin: { message: 3, id: "c1" },
    });
    expect(done.decl).toEqual(seen.at(-1)?.decl);
    expect(points).toEqual(["effect:test.peek", "record:test.peek"]);
    expect((await h.tree.list(recordsDir("intent1"))).children).toHaveLength(1);
  });

  it("records a refused call once, done, with no idempotency key, and never reaches a failpoint", async () => {
    points.length = 0;
    const r = await h.runtime.call("test.echo", { text: 3 }, { vid: "intent2" });
    expect(r.kind).toBe("arg");
    const rec = await recordAt(h.tree, r.record!);
    expect(rec.state).toBe("done");
    expect(rec.idempotencyKey).toBeUndefined();
    expect(points).toEqual([]);
  });

  it("records an edit's file hash before and the hash it intends after", async () => {
    await writeFile(join(h.workspace, "a.txt"), "one\ntwo\n");
    const r = await h.runtime.call(
      "edit.replace",
      { path: "a.txt", old: "two", new: "TWO" },
      { vid: "intent3" },
    );
    expect(r.kind).toBe("ok");
    const rec = await recordAt(h.tree, r.record!);
    expect(rec.sideEffect).toBe("files");
    expect(rec.files).toEqual([
      { path: join(h.workspace, "a.txt"), before: sha("one\ntwo\n"), after: sha("one\nTWO\n") },
    ]);
    expect(await readFile(join(h.workspace, "a.txt"), "utf8")).toBe("one\nTWO\n");

    const w = await h.runtime.call("edit.write", { path: "new.txt", text: "fresh" }, { vid: "intent3" });
    expect((await recordAt(h.tree, w.record!)).files).toEqual([
      { path: join(h.workspace, "new.txt"), before: null, after: sha("fresh") },
    ]);
  });

  it("records an edit that will fail as not planned, with the file's hash as it stands", async () => {
    const r = await h.runtime.call(
      "edit.replace",
      { path: "a.txt", old: "absent", new: "x" },
      { vid: "intent4" },
    );
    expect(r.kind).toBe("runtime");
    expect((await recordAt(h.tree, r.record!)).files).toEqual([
      { path: join(h.workspace, "a.txt"), before: sha("one\nTWO\n"), after: null, planned: false },
    ]);
  });

  it("marks the read tools as side-effect free", async () => {
    const r = await h.runtime.call("edit.read", { path: "a.txt" }, { vid: "intent5" });
    expect((await recordAt(h.tree, r.record!)).sideEffect).toBe("none");
  });

  it("sends the record's idempotency key with an http call, and the same key on a retry of that record", async () => {
    await declare(h.tree, {
      name: "count.add",
      description: "adds one",
      params: { type: "object", properties: {} },
      impl: { kind: "http", url: `http://127.0.0.1:${port}/add`, method: "POST" },
    });
    headers.length = 0;
    const r = await h.runtime.call("count.add", {}, { vid: "intent6" });
    expect(r.kind).toBe("ok");
    expect(headers[0]?.["idempotency-key"]).toBe("intent6/0");
    expect((await recordAt(h.tree, r.record!)).sideEffect).toBe("http");

    const again = await h.runtime.call("count.add", {}, { vid: "intent6", retry: r.record! });
    expect(again.record).toBe(r.record);
    expect(headers[1]?.["idempotency-key"]).toBe("intent6/0");
    expect((await h.tree.list(recordsDir("intent6"))).children).toHaveLength(1);
  });
});
