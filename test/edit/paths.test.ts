import { mkdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createReadTool, createReplaceTool, createWriteTool } from "../../tools/edit/index.js";
import { failure, makeWorkspace, type TestWorkspace } from "./workspace.js";

const read = createReadTool();
const write = createWriteTool();
const replace = createReplaceTool();

describe("workspace containment (shared by every edit tool)", () => {
  let ws: TestWorkspace;
  beforeEach(async () => {
    ws = await makeWorkspace();
    await writeFile(path.join(ws.root, "a.txt"), "inside\n");
    await mkdir(path.join(ws.dir, "root-evil"));
    await writeFile(path.join(ws.dir, "root-evil", "secret.txt"), "secret\n");
    await writeFile(path.join(ws.dir, "outside.txt"), "outside\n");
  });
  afterEach(() => ws.cleanup());

  it("accepts a relative path and an absolute path inside the root", async () => {
    expect((await ws.call(read, { path: "a.txt" })).text).toContain("1\tinside");
    expect((await ws.call(read, { path: path.join(ws.root, "a.txt") })).text).toContain("1\tinside");
  });

  it("refuses .. that climbs out of the root as outside_root (kind denied)", async () => {
    await failure(ws.call(read, { path: "../outside.txt" }), "outside_root", "denied");
    await failure(ws.call(write, { path: "sub/../../outside.txt", text: "x" }), "outside_root", "denied");
    expect(await readFile(path.join(ws.dir, "outside.txt"), "utf8")).toBe("outside\n");
  });

  it("allows .. that stays inside the root", async () => {
    await mkdir(path.join(ws.root, "sub"));
    expect((await ws.call(read, { path: "sub/../a.txt" })).text).toContain("inside");
  });

  it("treats a sibling root-evil as outside, by relative and absolute path", async () => {
    await failure(ws.call(read, { path: "../root-evil/secret.txt" }), "outside_root", "denied");
    await failure(ws.call(read, { path: `${ws.root}-evil/secret.txt` }), "outside_root", "denied");
    await failure(ws.call(write, { path: `${ws.root}-evil/new.txt`, text: "x" }), "outside_root", "denied");
  });

  it("follows a symlink that stays inside the root", async () => {
    await symlink("a.txt", path.join(ws.root, "link.txt"));
    expect((await ws.call(read, { path: "link.txt" })).text).toContain("inside");
  });

  it("refuses a symlink (file or folder) that escapes the root, for reading and writing", async () => {
    await symlink(path.join(ws.dir, "outside.txt"), path.join(ws.root, "out.txt"));
    await symlink(path.join(ws.dir, "root-evil"), path.join(ws.root, "evil"));
    await failure(ws.call(read, { path: "out.txt" }), "outside_root", "denied");
    await failure(ws.call(write, { path: "out.txt", text: "pwned" }), "outside_root", "denied");
    await failure(
      ws.call(replace, { path: "out.txt", old: "outside", new: "pwned" }),
      "outside_root",
      "denied",
    );
    await failure(ws.call(write, { path: "evil/new.txt", text: "pwned" }), "outside_root", "denied");
    expect(await readFile(path.join(ws.dir, "outside.txt"), "utf8")).toBe("outside\n");
    expect(await readlink(path.join(ws.root, "out.txt"))).toBe(path.join(ws.dir, "outside.txt"));
  });

  it("refuses to write through a dangling symlink whose target is outside", async () => {
    await symlink(path.join(ws.dir, "created-outside.txt"), path.join(ws.root, "dangling"));
    await failure(ws.call(write, { path: "dangling", text: "x" }), "outside_root", "denied");
    await expect(readFile(path.join(ws.dir, "created-outside.txt"))).rejects.toThrow();
  });

  it("refuses a NUL byte and Windows drive paths as invalid_path", async () => {
    await failure(ws.call(read, { path: "a\0.txt" }), "invalid_path");
    await failure(ws.call(write, { path: "C:\\temp\\x.txt", text: "x" }), "invalid_path");
    await failure(ws.call(read, { path: "c:/x" }), "invalid_path");
  });
});
