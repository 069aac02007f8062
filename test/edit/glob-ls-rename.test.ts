import { lstat, mkdir, readFile, readlink, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGlobTool, createLsTool, createRenameTool } from "../../tools/edit/index.js";
import { failure, makeWorkspace, type TestWorkspace, tempResidue } from "./workspace.js";

const glob = createGlobTool();
const ls = createLsTool();
const rename = createRenameTool();

let ws: TestWorkspace;
const at = (name: string) => path.join(ws.root, name);
const put = async (name: string, data = "x\n") => {
  await mkdir(path.dirname(at(name)), { recursive: true });
  await writeFile(at(name), data);
};
beforeEach(async () => {
  ws = await makeWorkspace();
});
afterEach(() => ws.cleanup());

describe("edit.glob", () => {
  it("lists matching files newest first, hidden included, .git and ignored excluded", async () => {
    await put("old.ts");
    await put("src/new.ts");
    await put(".hidden/h.ts");
    await put(".git/x.ts");
    await put("dist/out.ts");
    await put(".gitignore", "dist/\n");
    await utimes(at("old.ts"), 1000, 1000);
    await utimes(at("src/new.ts"), 3000, 3000);
    await utimes(at(".hidden/h.ts"), 2000, 2000);
    const r = await ws.call(glob, { pattern: "*.ts" });
    expect(r.text.split("\n")).toEqual([
      "src/new.ts",
      ".hidden/h.ts",
      "old.ts",
      "[1 paths ignored by .gitignore were left out; name a path inside them to look there.]",
    ]);
    expect((await ws.call(glob, { pattern: "**/*.ts", path: "dist" })).text).toBe("dist/out.ts");
  });

  it("matches paths relative to path when the pattern has a slash", async () => {
    await put("src/a/x.ts");
    await put("lib/a/x.ts");
    expect((await ws.call(glob, { pattern: "src/**/*.ts" })).text).toBe("src/a/x.ts");
  });

  it("returns the files of an ignored folder the pattern names, as ripgrep and fd do", async () => {
    await put(".gitignore", "node_modules/\n");
    await put("node_modules/pkg/index.js");
    await put("node_modules/pkg/lib/util.js");
    await put("node_modules/pkg/README.md");
    await put("src/app.js");
    const named = await ws.call(glob, { pattern: "node_modules/**/*.js" });
    expect(named.text.split("\n").sort()).toEqual([
      "node_modules/pkg/index.js",
      "node_modules/pkg/lib/util.js",
    ]);
    const deeper = await ws.call(glob, { pattern: "node_modules/pkg/lib/*.js" });
    expect(deeper.text).toBe("node_modules/pkg/lib/util.js");
    // a pattern that does not name the folder still leaves it out
    const anywhere = await ws.call(glob, { pattern: "**/*.js" });
    expect(anywhere.text.split("\n")[0]).toBe("src/app.js");
    expect(anywhere.text).not.toContain("node_modules/pkg");
  });

  it("does not follow a symlinked folder the pattern names out of the workspace", async () => {
    const outside = path.join(path.dirname(ws.root), "outside");
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, "secret.js"), "x\n");
    await symlink(outside, at("link"));
    const r = await ws.call(glob, { pattern: "link/**/*.js" });
    expect(r.text).toBe('No files match "link/**/*.js" in ..');
  });

  it("says when nothing matches, and refuses a file as path", async () => {
    await put("a.txt");
    expect((await ws.call(glob, { pattern: "*.md" })).text).toBe('No files match "*.md" in ..');
    await failure(ws.call(glob, { pattern: "*", path: "a.txt" }), "not_a_directory");
  });
});

describe("edit.ls", () => {
  it("lists entries by name, folders with /, dotfiles and dangling symlinks included", async () => {
    await put("b.txt");
    await put(".env");
    await put("Adir/x");
    await symlink("nowhere", at("broken"));
    await symlink("Adir", at("dirlink"));
    const r = await ws.call(ls, {});
    expect(r.text.split("\n")).toEqual([
      ".env",
      "Adir/",
      "b.txt",
      "broken -> nowhere (dangling symlink)",
      "dirlink/",
    ]);
  });

  it("says when a folder is empty, refuses a file", async () => {
    await mkdir(at("empty"));
    expect((await ws.call(ls, { path: "empty" })).text).toBe("empty is an empty folder.");
    await put("f.txt");
    await failure(ws.call(ls, { path: "f.txt" }), "not_a_directory");
  });

  it("caps at 500 entries with a note", async () => {
    await mkdir(at("many"));
    await Promise.all(
      Array.from({ length: 510 }, (_, i) => writeFile(at(`many/f${String(i).padStart(3, "0")}`), "")),
    );
    const rows = (await ws.call(ls, { path: "many" })).text.split("\n");
    expect(rows).toHaveLength(501);
    expect(rows[500]).toBe("[Showing 500 of 510 entries; use edit.glob to find specific files.]");
  });
});

describe("edit.rename", () => {
  it("renames into new parent folders and leaves no temp residue", async () => {
    await put("a.txt", "content\n");
    const r = await ws.call(rename, { from: "a.txt", to: "deep/er/b.txt" });
    expect(r.text).toBe("Renamed a.txt to deep/er/b.txt.");
    expect(await readFile(at("deep/er/b.txt"), "utf8")).toBe("content\n");
    expect(await tempResidue(ws.root)).toEqual([]);
  });

  it("refuses to replace an existing file unless overwrite", async () => {
    await put("a.txt", "a\n");
    await put("b.txt", "b\n");
    await failure(ws.call(rename, { from: "a.txt", to: "b.txt" }), "already_exists");
    expect(await readFile(at("b.txt"), "utf8")).toBe("b\n");
    await ws.call(rename, { from: "a.txt", to: "b.txt", overwrite: true });
    expect(await readFile(at("b.txt"), "utf8")).toBe("a\n");
  });

  it("moves a symlink itself, not its target", async () => {
    await put("t.txt");
    await symlink("t.txt", at("l"));
    await ws.call(rename, { from: "l", to: "l2" });
    expect((await lstat(at("l2"))).isSymbolicLink()).toBe(true);
    expect(await readlink(at("l2"))).toBe("t.txt");
  });

  it("refuses a missing source, an outside target and a folder as target", async () => {
    await failure(ws.call(rename, { from: "nope", to: "x" }), "file_not_found");
    await put("a.txt");
    await failure(ws.call(rename, { from: "a.txt", to: "../escaped.txt" }), "outside_root", "denied");
    await failure(ws.call(rename, { from: "a.txt", to: `${ws.root}-evil/x.txt` }), "outside_root", "denied");
    await mkdir(at("d"));
    await failure(ws.call(rename, { from: "a.txt", to: "d" }), "is_directory");
  });
});
