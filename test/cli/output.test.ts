/**
 * Scriptable output (`-o json|ndjson`, `--quiet`): the shapes README.md's CLI section documents,
 * parsed back, on one embedded store through the same dispatcher the executable uses.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, tempDirs } from "./cli-server.js";
import { runInProcess } from "./in-process.js";

const temps = tempDirs("kvspace-output-");
let env: NodeJS.ProcessEnv = {};

beforeAll(async () => {
  env = cliEnv(join(await temps.make(), "store"), { BYTESEEK_SEED: "0", BYTESEEK_HISTORY: "/h/=5" });
});
afterAll(() => temps.removeAll());

const kv = (...args: string[]) => runInProcess(args, { env });
const lines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("kvspace -o json|ndjson", () => {
  it("prints each write as {key, rev, version}, and reads back the HTTP API's node shapes", async () => {
    const set = await kv("set", "-o", "json", "/o/a", "int:9007199254740993");
    expect(set.code).toBe(0);
    const written = JSON.parse(set.stdout) as { key: string; rev: number; version: number };
    expect(written).toEqual({ key: "/o/a", rev: expect.any(Number), version: 1 });
    const [node] = lines((await kv("get", "-o", "json", "/o/a", "/o/none")).stdout);
    // beyond 2^53 an int64 is a decimal string, exactly
    expect(node).toMatchObject({
      key: "/o/a",
      kind: "int64",
      value: "9007199254740993",
      version: 1,
      ro: false,
    });
    expect(node?.modRev).toBe(written.rev);
    expect(lines((await kv("get", "-o", "ndjson", "/o/none")).stdout)).toEqual([
      { key: "/o/none", absent: true },
    ]);
    const [head] = lines((await kv("head", "-o", "json", "/o/a")).stdout);
    expect(head).toMatchObject({ key: "/o/a", kind: "int64", version: 1 });
    expect(head).not.toHaveProperty("value");
  });

  it("lists as one document or one child a line, and draws a tree as entries", async () => {
    await kv("set", "/o/d/x", "string:deep");
    const list = JSON.parse((await kv("list", "-o", "json", "/o/")).stdout) as {
      key: string;
      children: Array<Record<string, unknown>>;
    };
    expect(list.key).toBe("/o/");
    expect(list.children.map((c) => [c.name, c.kind, c.value ?? c.count])).toEqual([
      ["a", "int64", "9007199254740993"],
      ["d/", "index", 1],
    ]);
    expect(lines((await kv("ls", "-o", "ndjson", "/o/")).stdout).map((c) => c.name)).toEqual(["a", "d/"]);
    expect(lines((await kv("tree", "-o", "ndjson", "/o/")).stdout).map((e) => e.key)).toEqual([
      "/o/a",
      "/o/d/",
      "/o/d/x",
    ]);
  });

  it("prints history as {key, history}, a delete with deleted, and a deltree with removed", async () => {
    await kv("set", "/h/v", "int:1");
    await kv("set", "/h/v", "int:2");
    const history = JSON.parse((await kv("history", "-o", "json", "/h/v")).stdout) as {
      key: string;
      history: Array<{ value: unknown; version: number }>;
    };
    expect(history.key).toBe("/h/v");
    expect(history.history.map((h) => [h.value, h.version])).toEqual([[1, 1]]);
    expect(JSON.parse((await kv("del", "-o", "json", "/h/none")).stdout)).toMatchObject({ deleted: false });
    expect(JSON.parse((await kv("deltree", "-o", "json", "/h/")).stdout)).toMatchObject({
      key: "/h/",
      removed: 2,
    });
  });

  it("--quiet leaves the notes off stderr; the data and the exit code stay", async () => {
    const noisy = await kv("list", "/nowhere/");
    expect(noisy.stderr).toContain("no directory /nowhere/");
    const quiet = await kv("list", "--quiet", "/nowhere/");
    expect({ code: quiet.code, stderr: quiet.stderr, stdout: quiet.stdout }).toEqual({
      code: 0,
      stderr: "",
      stdout: "",
    });
    // errors are still said
    const failing = await kv("get", "-q", "bad key");
    expect(failing.code).toBe(1);
    expect(failing.stderr).not.toBe("");
  });

  it("says what history has not kept, instead of printing nothing", async () => {
    await kv("set", "/nohist/v", "int:1");
    const r = await kv("history", "/nohist/v");
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("/nohist/v (version 1) has no previous versions kept; BYTESEEK_HISTORY sets");
  });
});
