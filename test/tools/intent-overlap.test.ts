/**
 * Intent overlapped with preparation: an edit, a command or an http call runs while its `started`
 * record is being stored (its temp file written, its sandbox set up, its connection opened), but
 * its effect — the rename, the exec, the request — waits until the record is stored, and never
 * happens when it cannot be.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { aroundStarts } from "../../bench/fixtures.js";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createEditTools } from "../../tools/edit/index.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { createShellTools } from "../../tools/shell/index.js";
import type { BuiltinTool } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { declare, grantEverything, personEdits, recordAt, silent, tempDir } from "./helpers.js";

/** The effects test.effect made: one per call that got past ctx.intentDurable(). */
const effects: string[] = [];
/** Told when test.effect starts waiting for its intent. */
let atGate: () => void = () => {};

/** A built-in whose effect comes right after ctx.intentDurable(), as a command's exec does. */
const effectTool: BuiltinTool = {
  ref: "test.effect",
  declaration: {
    name: "test.effect",
    description: "makes one effect once its intent is stored",
    params: { type: "object", properties: {} },
    impl: { kind: "builtin", ref: "test.effect" },
  },
  awaitsIntent: true,
  async execute(_args, ctx) {
    const waiting = ctx.intentDurable?.();
    atGate();
    await waiting;
    effects.push(ctx.vid);
    return { text: "done" };
  },
};

/** A loopback counter server: the connections it saw (open or closed), and each request's Idempotency-Key. */
function counterServer() {
  const seen = { connections: [] as Array<{ closed: boolean }>, keys: [] as string[] };
  const server = createServer((req, res) => {
    seen.keys.push(String(req.headers["idempotency-key"]));
    req.resume();
    req.on("end", () => res.end('{"count":1}'));
  });
  server.on("connection", (socket) => {
    const connection = { closed: false };
    seen.connections.push(connection);
    socket.on("close", () => {
      connection.closed = true;
    });
  });
  return { server, seen };
}

/** What the next `started` record's write does: wait for `release`, or fail. */
interface Hold {
  mode: "pass" | "hold" | "fail";
  /** Resolves when a started record reached the store's door (held or failed there). */
  reached: Promise<void>;
  release(): void;
}

/** The tree, with every `started` record's append held or failed as `hold` says. */
function holdingStarts(tree: Tree, hold: { current: Hold & { wait(): Promise<void> } }): Tree {
  return aroundStarts(tree, async (append) => {
    await hold.current.wait();
    return append();
  });
}

function newHold(mode: Hold["mode"]): Hold & { wait(): Promise<void> } {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => {
    reach = r;
  });
  const released = new Promise<void>((r) => {
    release = r;
  });
  return {
    mode,
    reached,
    release,
    async wait() {
      reach();
      if (mode === "fail") throw new Error("the disk is full");
      if (mode === "hold") await released;
    },
  };
}

describe("an effect held back until its intent is stored", () => {
  let tree: Tree;
  let runtime: Runtime;
  let ws: string;
  const hold: { current: Hold & { wait(): Promise<void> } } = { current: newHold("pass") };
  const dirs: Array<{ remove(): Promise<void> }> = [];
  const counter = counterServer();
  const seen = counter.seen;

  beforeAll(async () => {
    counter.server.listen(0, "127.0.0.1");
    await new Promise((r) => counter.server.once("listening", r));
    const port = (counter.server.address() as AddressInfo).port;
    const store = await tempDir("byteseek-overlap-db-");
    const workspace = await tempDir("byteseek-overlap-ws-");
    dirs.push(store, workspace);
    const raw = await openTree({ backend: "classic", location: store.path, sync: "always" });
    const builtins = [...createEditTools(), ...createShellTools(), effectTool];
    await seedTools({ tree: raw, builtins });
    await grantEverything(raw, [`127.0.0.1:${port}`]);
    await personEdits(raw, "edit.rename", { enabled: true });
    const add = { kind: "http", url: `http://127.0.0.1:${port}/add`, method: "POST" };
    await declare(raw, { name: "count.add", description: "adds one", params: { type: "object" }, impl: add });
    await declare(raw, {
      name: "count.slow",
      description: "adds one, or times out",
      params: { type: "object" },
      impl: { ...add, timeoutMs: 100 },
    });
    tree = holdingStarts(raw, hold);
    runtime = createRuntime({ tree, builtins, logger: silent, workspace: workspace.path });
    ws = runtime.workspace;
  });
  afterAll(async () => {
    await runtime.close();
    await tree.close();
    counter.server.close();
    for (const d of dirs) await d.remove();
  });

  /** The temp files of atomic writes in the workspace. */
  const temps = async () => (await readdir(ws)).filter((n) => n.includes(".byteseek-tmp-"));

  it("writes an edit's temp file while its started record is held, and renames it only once the record is stored", async () => {
    await writeFile(join(ws, "a.txt"), "before\n");
    hold.current = newHold("hold");
    const call = runtime.call("edit.write", { path: "a.txt", text: "after\n" }, { vid: "overlap1" });
    await hold.current.reached;
    // the preparation ran meanwhile: the new content sits in its temp file, the target is untouched
    await vi.waitFor(async () => expect(await temps()).toHaveLength(1), { timeout: 10_000 });
    expect(await readFile(join(ws, "a.txt"), "utf8")).toBe("before\n");
    hold.current.release();
    const r = await call;
    expect(r.kind, r.text).toBe("ok");
    expect(await readFile(join(ws, "a.txt"), "utf8")).toBe("after\n");
    expect(await temps()).toEqual([]);
    expect(await recordAt(tree, r.record!)).toMatchObject({ state: "done", sideEffect: "files" });
  });

  it("holds edit.replace and edit.rename the same way", async () => {
    await writeFile(join(ws, "b.txt"), "one two\n");
    hold.current = newHold("hold");
    const replaced = runtime.call(
      "edit.replace",
      { path: "b.txt", old: "two", new: "three" },
      { vid: "overlap2" },
    );
    await hold.current.reached;
    await vi.waitFor(async () => expect(await temps()).toHaveLength(1), { timeout: 10_000 });
    expect(await readFile(join(ws, "b.txt"), "utf8")).toBe("one two\n");
    hold.current.release();
    expect((await replaced).kind).toBe("ok");
    expect(await readFile(join(ws, "b.txt"), "utf8")).toBe("one three\n");

    hold.current = newHold("hold");
    const renamed = runtime.call("edit.rename", { from: "b.txt", to: "c.txt" }, { vid: "overlap2" });
    await hold.current.reached;
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(join(ws, "b.txt"))).toBe(true);
    hold.current.release();
    expect((await renamed).kind).toBe("ok");
    expect(existsSync(join(ws, "b.txt"))).toBe(false);
    expect(await readFile(join(ws, "c.txt"), "utf8")).toBe("one three\n");
  });

  it("starts no command before its started record is stored", async () => {
    hold.current = newHold("hold");
    const call = runtime.call("shell.run", { command: "echo ran >> log.txt" }, { vid: "overlap3" });
    await hold.current.reached;
    await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(join(ws, "log.txt"))).toBe(false);
    hold.current.release();
    const r = await call;
    expect(r.kind, r.text).toBe("ok");
    expect(await readFile(join(ws, "log.txt"), "utf8")).toBe("ran\n");
  });

  it("answers a read only once its started record is stored, though the read ran meanwhile", async () => {
    await writeFile(join(ws, "r.txt"), "read me\n");
    hold.current = newHold("hold");
    let answered = false;
    const call = runtime.call("edit.read", { path: "r.txt" }, { vid: "overlap5" }).then((r) => {
      answered = true;
      return r;
    });
    await hold.current.reached;
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    hold.current.release();
    const r = await call;
    expect(r.text).toContain("read me");
    expect(await recordAt(tree, r.record!)).toMatchObject({ state: "done", sideEffect: "none" });
  });

  it("makes no change when the call is aborted while its started record is held, even once the record lands", async () => {
    await writeFile(join(ws, "e.txt"), "kept\n");
    hold.current = newHold("hold");
    const stop = new AbortController();
    const edit = runtime.call(
      "edit.write",
      { path: "e.txt", text: "lost\n" },
      { vid: "overlap6", signal: stop.signal },
    );
    await hold.current.reached;
    await vi.waitFor(async () => expect(await temps()).toHaveLength(1), { timeout: 10_000 });
    stop.abort();
    hold.current.release();
    expect(await edit).toMatchObject({ isError: true, details: { code: "aborted" } });
    expect(await readFile(join(ws, "e.txt"), "utf8")).toBe("kept\n");
    expect(await temps()).toEqual([]);

    // a tool's own effect after ctx.intentDurable() (as the command scope's exec) is not reached either
    hold.current = newHold("hold");
    const again = new AbortController();
    const waiting = new Promise<void>((r) => {
      atGate = r;
    });
    const call = runtime.call("test.effect", {}, { vid: "overlap6", signal: again.signal });
    await hold.current.reached;
    await waiting;
    again.abort();
    hold.current.release();
    expect(await call).toMatchObject({ isError: true, details: { code: "aborted" } });
    await new Promise((r) => setTimeout(r, 20));
    expect(effects).toEqual([]);
  });

  it("changes nothing, and says the call did not run, when its start cannot be recorded", async () => {
    await writeFile(join(ws, "d.txt"), "kept\n");
    hold.current = newHold("fail");
    const edit = await runtime.call("edit.write", { path: "d.txt", text: "lost\n" }, { vid: "overlap4" });
    expect(edit).toMatchObject({ kind: "runtime", isError: true });
    expect(edit.text).toMatch(/did not run: byteseek could not record its start/);
    expect(await readFile(join(ws, "d.txt"), "utf8")).toBe("kept\n");
    expect(await temps()).toEqual([]);

    hold.current = newHold("fail");
    const command = await runtime.call(
      "shell.run",
      { command: "echo ran >> never.txt" },
      { vid: "overlap4" },
    );
    expect(command).toMatchObject({ kind: "runtime", isError: true });
    expect(existsSync(join(ws, "never.txt"))).toBe(false);
  });

  it("opens an http call's connection while its started record is held, and sends its request only once the record is stored", async () => {
    seen.keys.length = 0;
    const opened = seen.connections.length;
    hold.current = newHold("hold");
    const call = runtime.call("count.add", {}, { vid: "overlap7" });
    await hold.current.reached;
    // the preparation ran meanwhile: host rules checked, the connection to the checked address open
    await vi.waitFor(() => expect(seen.connections).toHaveLength(opened + 1), { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.keys).toEqual([]);
    hold.current.release();
    const r = await call;
    expect(r.kind, r.text).toBe("ok");
    // on the connection opened early, with the record's key
    expect(seen.connections).toHaveLength(opened + 1);
    expect(seen.keys).toEqual(["overlap7/0"]);
    expect(await recordAt(tree, r.record!)).toMatchObject({
      state: "done",
      sideEffect: "http",
      idempotencyKey: "overlap7/0",
    });
    expect(r.record).toBe("/byteseek/tool/overlap7/0");

    // a resumed run's retry of that record sends the same key
    const again = await runtime.call("count.add", {}, { vid: "overlap7", retry: r.record! });
    expect(again.kind, again.text).toBe("ok");
    expect(seen.keys).toEqual(["overlap7/0", "overlap7/0"]);
  });

  it("sends no http request when the call is aborted or times out while its started record is held, even once the record lands", async () => {
    seen.keys.length = 0;
    hold.current = newHold("hold");
    const stop = new AbortController();
    const opened = seen.connections.length;
    const aborted = runtime.call("count.add", {}, { vid: "overlap8", signal: stop.signal });
    await hold.current.reached;
    await vi.waitFor(() => expect(seen.connections).toHaveLength(opened + 1), { timeout: 10_000 });
    stop.abort();
    // the call gave up its connection unused
    await vi.waitFor(() => expect(seen.connections[opened]?.closed).toBe(true), { timeout: 10_000 });
    hold.current.release();
    expect(await aborted).toMatchObject({ isError: true, details: { code: "aborted" } });

    hold.current = newHold("hold");
    const late = runtime.call("count.slow", {}, { vid: "overlap8" });
    await hold.current.reached;
    await vi.waitFor(() => expect(seen.connections[opened + 1]?.closed).toBe(true), { timeout: 10_000 });
    hold.current.release();
    expect(await late).toMatchObject({ isError: true, details: { code: "timeout" } });
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.keys).toEqual([]);
  });

  it("sends no http request when its start cannot be recorded", async () => {
    seen.keys.length = 0;
    hold.current = newHold("fail");
    const r = await runtime.call("count.add", {}, { vid: "overlap9" });
    expect(r).toMatchObject({ kind: "runtime", isError: true });
    expect(r.text).toMatch(/did not run: byteseek could not record its start/);
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.keys).toEqual([]);
  });
});
