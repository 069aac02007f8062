import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { grepWorkerUrl } from "../../tools/edit/grep-pool.js";
import { createGrepTool } from "../../tools/edit/index.js";
import { failure, makeWorkspace, type TestWorkspace } from "./workspace.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The sources the compiled grep worker runs. */
const WORKER_SOURCES = ["grep-worker", "grep-search", "walker", "gitignore-rules", "regular-file"].map((n) =>
  path.join(ROOT, "tools", "edit", `${n}.ts`),
);

/** The worker threads run dist/ (a worker cannot load TypeScript): build it when missing or older than its sources. */
function ensureCompiledWorker(): void {
  const compiled = path.join(ROOT, "dist", "tools", "edit", "grep-worker.js");
  const mtime = (f: string) => statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const newest = Math.max(...WORKER_SOURCES.map(mtime));
  if (mtime(compiled) < newest) {
    try {
      execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "ignore" });
    } catch {
      // type errors elsewhere in the tree: the output is still written
    }
  }
  if (mtime(compiled) < newest)
    throw new Error(`${compiled} is missing or stale and could not be built: run npm run build first.`);
}

describe.each([
  ["in the calling thread", 0],
  ["with worker threads", 2],
])("edit.grep, searching %s", (_how, threads) => {
  const grep = createGrepTool({ threads });
  beforeAll(() => {
    if (threads > 0) {
      ensureCompiledWorker();
      expect(grepWorkerUrl()).toBeDefined();
    }
  }, 300_000);
  let ws: TestWorkspace;
  const put = async (name: string, data: string | Uint8Array) => {
    await mkdir(path.dirname(path.join(ws.root, name)), { recursive: true });
    await writeFile(path.join(ws.root, name), data);
  };
  beforeEach(async () => {
    ws = await makeWorkspace();
    await put("b.txt", "needle two\nhay\nneedle three\n");
    await put("a.txt", "hay\nneedle one\n");
    await put("src/c.ts", "const needle = 1;\n");
  });
  afterEach(() => ws.cleanup());

  it("answers path:line:text sorted by path and line", async () => {
    const r = await ws.call(grep, { pattern: "needle" });
    expect(r.text).toBe(
      [
        "a.txt:2:needle one",
        "b.txt:1:needle two",
        "b.txt:3:needle three",
        "src/c.ts:1:const needle = 1;",
      ].join("\n"),
    );
    expect(r.details).toMatchObject({ matches: 4, files: 3, capped: false, threads });
  });

  it("keeps path order across many files and stops at limit across them", async () => {
    const names = Array.from({ length: 700 }, (_, i) => `many/d${i % 7}/f${String(i).padStart(3, "0")}.txt`);
    for (const n of names) await put(n, `x\nneedle in ${n}\n`);
    const r = await ws.call(grep, { pattern: "needle in many", limit: 1000 });
    const expected = [...names].sort().map((n) => `${n}:2:needle in ${n}`);
    expect(r.text).toBe(expected.join("\n"));
    const capped = await ws.call(grep, { pattern: "needle in many", limit: 250 });
    expect(capped.text.split("\n")).toEqual([
      ...expected.slice(0, 250),
      "[Showing the first 250 matches; there are more. Narrow the pattern or path, or raise limit.]",
    ]);
  });

  it("reads large files whole and finds a NUL byte far into one", async () => {
    const big = "filler line\n".repeat(20_000);
    await put("big.txt", `${big}needle at the end\n`);
    await put("late-nul.txt", Buffer.concat([Buffer.from(`${big}needle\n`), Buffer.from([0])]));
    const r = await ws.call(grep, { pattern: "needle at" });
    expect(r.text).toBe("big.txt:20001:needle at the end");
    expect((await ws.call(grep, { pattern: "needle$" })).details).toMatchObject({ binarySkipped: 1 });
  });

  it("honours .gitignore, notes what it left out, and searches an ignored folder named as path", async () => {
    await put(".gitignore", "build/\n*.log\n");
    await put("build/out.js", "needle in build\n");
    await put("run.log", "needle in log\n");
    const r = await ws.call(grep, { pattern: "needle in" });
    expect(r.text).toMatch(/^No matches/);
    expect(r.text).toContain("2 paths ignored by .gitignore");
    const named = await ws.call(grep, { pattern: "needle", path: "build" });
    expect(named.text.split("\n")[0]).toBe("build/out.js:1:needle in build");
  });

  it("applies a nested .gitignore below its folder, and a negation in it wins", async () => {
    await put(".gitignore", "*.gen\n");
    await put("pkg/.gitignore", "!keep.gen\nlocal.txt\n");
    await put("pkg/keep.gen", "needle gen\n");
    await put("pkg/drop.gen", "needle gen\n");
    await put("pkg/local.txt", "needle local\n");
    const r = await ws.call(grep, { pattern: "needle (gen|local)" });
    expect(r.text.split("\n")[0]).toBe("pkg/keep.gen:1:needle gen");
    expect(r.text).not.toContain("drop.gen");
    expect(r.text).not.toContain("local.txt");
  });

  it("skips .git and binary files, searches hidden files", async () => {
    await put(".git/config", "needle in git\n");
    await put(".hidden/h.txt", "needle hidden\n");
    await put("blob.bin", Buffer.from("needle\0binary\n"));
    const r = await ws.call(grep, { pattern: "needle (in git|hidden|\\x00)" });
    expect(r.text.split("\n")).toEqual([".hidden/h.txt:1:needle hidden"]);
    expect((await ws.call(grep, { pattern: "binary" })).details).toMatchObject({
      matches: 0,
      binarySkipped: 1,
    });
  });

  it("survives a symlink loop (symlinks are not followed)", async () => {
    await mkdir(path.join(ws.root, "loop"));
    await symlink("..", path.join(ws.root, "loop", "up"));
    await symlink("self", path.join(ws.root, "self"));
    const r = await ws.call(grep, { pattern: "needle one" });
    expect(r.text).toBe("a.txt:2:needle one");
  });

  it("cuts long lines at 500 characters", async () => {
    await put("long.txt", `needle${"x".repeat(1000)}\n`);
    const r = await ws.call(grep, { pattern: "needle", path: "long.txt" });
    expect(r.text).toBe(`long.txt:1:needle${"x".repeat(494)}…`);
  });

  it("stops at limit with a note", async () => {
    await put("many.txt", "needle\n".repeat(10));
    const r = await ws.call(grep, { pattern: "needle", path: "many.txt", limit: 3 });
    expect(r.text.split("\n")).toEqual([
      "many.txt:1:needle",
      "many.txt:2:needle",
      "many.txt:3:needle",
      "[Showing the first 3 matches; there are more. Narrow the pattern or path, or raise limit.]",
    ]);
  });

  it("reports no match as a success that says so", async () => {
    const r = await ws.call(grep, { pattern: "absent" });
    expect(r.text).toBe('No matches for "absent" in ..');
  });

  it("refuses a bad pattern with invalid_pattern", async () => {
    await failure(ws.call(grep, { pattern: "(unclosed" }), "invalid_pattern");
  });

  it("supports literal, ignoreCase, glob and context", async () => {
    await put("lit.txt", "a.b\naxb\nA.B\n");
    expect((await ws.call(grep, { pattern: "a.b", path: "lit.txt", literal: true })).text).toBe(
      "lit.txt:1:a.b",
    );
    expect(
      (await ws.call(grep, { pattern: "a.b", path: "lit.txt", literal: true, ignoreCase: true })).text,
    ).toBe("lit.txt:1:a.b\nlit.txt:3:A.B");
    expect((await ws.call(grep, { pattern: "needle", glob: "*.ts" })).text).toBe(
      "src/c.ts:1:const needle = 1;",
    );
    await put("ctx.txt", "1\n2\nhit\n4\n5\n6\n7\nhit\n9\n");
    expect((await ws.call(grep, { pattern: "hit", path: "ctx.txt", context: 1 })).text).toBe(
      [
        "ctx.txt-2-2",
        "ctx.txt:3:hit",
        "ctx.txt-4-4",
        "--",
        "ctx.txt-7-7",
        "ctx.txt:8:hit",
        "ctx.txt-9-9",
      ].join("\n"),
    );
  });

  it("refuses a path outside the workspace", async () => {
    await failure(ws.call(grep, { pattern: "x", path: ".." }), "outside_root", "denied");
  });
});
