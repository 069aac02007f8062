import { spawnSync } from "node:child_process";
import { constants } from "node:fs";
import { open, readdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEditTools } from "../../tools/edit/index.js";
import type { BuiltinTool } from "../../tools/types.js";
import { failure, makeWorkspace, type TestWorkspace } from "./workspace.js";

const tools = new Map(createEditTools().map((t) => [t.ref, t]));
const tool = (ref: string): BuiltinTool => tools.get(ref)!;

function mkfifo(p: string): void {
  expect(spawnSync("mkfifo", [p]).status).toBe(0);
}

describe("the edit tools refuse FIFOs, sockets and devices without opening them", () => {
  let ws: TestWorkspace;
  let socket: Server | undefined;
  beforeEach(async () => {
    ws = await makeWorkspace();
    mkfifo(path.join(ws.root, "pipe"));
  });
  afterEach(async () => {
    // a reader stuck in open() (without the fix) is let go
    const fh = await open(path.join(ws.root, "pipe"), constants.O_WRONLY | constants.O_NONBLOCK).catch(
      () => undefined,
    );
    await fh?.close();
    await new Promise<void>((r) => (socket ? socket.close(() => r()) : r()));
    socket = undefined;
    await ws.cleanup();
  });

  const calls: Array<[string, Record<string, unknown>]> = [
    ["edit.read", { path: "pipe" }],
    ["edit.write", { path: "pipe", text: "x" }],
    ["edit.replace", { path: "pipe", old: "a", new: "b" }],
    ["edit.multi", { path: "pipe", edits: [{ old: "a", new: "b" }] }],
    ["edit.grep", { pattern: "a", path: "pipe" }],
    ["edit.rename", { from: "pipe", to: "renamed" }],
  ];

  it.each(calls)("%s on a FIFO answers not_regular_file and leaves it in place", async (ref, args) => {
    const e = await failure(ws.call(tool(ref), args), "not_regular_file", "runtime");
    expect(e.message).toContain("pipe is a FIFO (named pipe), not a regular file");
    expect((await readdir(ws.root)).sort()).toEqual(["pipe"]);
  });

  it("refuses a socket and a character device reached through a path inside the workspace", async () => {
    const sock = path.join(ws.root, "s.sock");
    socket = createServer();
    await new Promise<void>((r) => socket!.listen(sock, r));
    const e = await failure(ws.call(tool("edit.read"), { path: "s.sock" }), "not_regular_file");
    expect(e.message).toContain("s.sock is a socket");
    // a device node inside the workspace, when this user may make one (root in a container)
    const made = spawnSync("mknod", [path.join(ws.root, "null"), "c", "1", "3"]).status === 0;
    if (made) {
      const d = await failure(ws.call(tool("edit.write"), { path: "null", text: "x" }), "not_regular_file");
      expect(d.message).toContain("null is a character device");
    }
  });

  it("searches a folder holding a FIFO (and a FIFO .gitignore) without waiting on them", async () => {
    await writeFile(path.join(ws.root, "a.txt"), "needle\n");
    mkfifo(path.join(ws.root, ".gitignore"));
    const r = await ws.call(tool("edit.grep"), { pattern: "needle" });
    expect(r.text).toBe("a.txt:1:needle");
  });
});
