import { chmod, lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWriteTool } from "../../tools/edit/index.js";
import { failure, makeWorkspace, type TestWorkspace, tempResidue } from "./workspace.js";

const write = createWriteTool();

describe("edit.write", () => {
  let ws: TestWorkspace;
  const at = (name: string) => path.join(ws.root, name);
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(() => ws.cleanup());

  it("creates a file with exactly the text, creating missing parents", async () => {
    const r = await ws.call(write, { path: "a/b/c.txt", text: "one\r\ntwo" });
    expect(await readFile(at("a/b/c.txt"), "utf8")).toBe("one\r\ntwo");
    expect(r.text).toBe("Created a/b/c.txt (8 bytes, 2 lines).");
  });

  it("replaces an existing file whole and leaves no temp file", async () => {
    await writeFile(at("f.txt"), "old content\n");
    const r = await ws.call(write, { path: "f.txt", text: "new\n" });
    expect(r.text).toMatch(/^Replaced f.txt/);
    expect(await readFile(at("f.txt"), "utf8")).toBe("new\n");
    expect(await tempResidue(ws.root)).toEqual([]);
  });

  it("refuses a parent that is a file with not_a_directory", async () => {
    await writeFile(at("file"), "x");
    await failure(ws.call(write, { path: "file/child.txt", text: "y" }), "not_a_directory");
    await failure(ws.call(write, { path: "file/deeper/child.txt", text: "y" }), "not_a_directory");
  });

  it("refuses a directory with is_directory", async () => {
    await mkdir(at("dir"));
    await failure(ws.call(write, { path: "dir", text: "y" }), "is_directory");
  });

  it("refuses a file whose owner-write bit is clear, even as root, and leaves it unchanged", async () => {
    await writeFile(at("ro.txt"), "keep\n");
    await chmod(at("ro.txt"), 0o444);
    await failure(ws.call(write, { path: "ro.txt", text: "changed" }), "permission_denied");
    expect(await readFile(at("ro.txt"), "utf8")).toBe("keep\n");
  });

  it("keeps the file's mode", async () => {
    await writeFile(at("run.sh"), "#!/bin/sh\n");
    await chmod(at("run.sh"), 0o751);
    await ws.call(write, { path: "run.sh", text: "#!/bin/sh\necho hi\n" });
    expect((await stat(at("run.sh"))).mode & 0o7777).toBe(0o751);
  });

  it("writes a symlink's target and keeps the symlink", async () => {
    await writeFile(at("target.txt"), "old\n");
    await symlink("target.txt", at("link.txt"));
    await ws.call(write, { path: "link.txt", text: "new\n" });
    expect((await lstat(at("link.txt"))).isSymbolicLink()).toBe(true);
    expect(await readlink(at("link.txt"))).toBe("target.txt");
    expect(await readFile(at("target.txt"), "utf8")).toBe("new\n");
  });

  it("keeps a BOM the file had and never adds one", async () => {
    await writeFile(at("bom.txt"), "\uFEFFold\n");
    await ws.call(write, { path: "bom.txt", text: "new\n" });
    expect(await readFile(at("bom.txt"), "utf8")).toBe("\uFEFFnew\n");
    await ws.call(write, { path: "plain.txt", text: "new\n" });
    expect((await readFile(at("plain.txt")))[0]).toBe(0x6e);
  });
});
