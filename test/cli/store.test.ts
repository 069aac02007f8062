import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { cliEnv, tempDirs } from "./cli-server.js";
import { runInProcess } from "./in-process.js";

const temps = tempDirs("kvspace-store-");
afterAll(() => temps.removeAll());

describe("kvspace on the embedded store", () => {
  let held: Tree | undefined;
  afterEach(async () => {
    await held?.close();
    held = undefined;
  });

  it("says a locked store is in use, without a stack and without pointing at a server it did not find", async () => {
    const store = join(await temps.make(), "store");
    held = await openTree({ backend: "classic", location: store });
    await held.set("/held", { kind: "int64", value: 1n });
    // BYTESEEK_PORT names a port nothing listens on: no hint may point there
    const result = await runInProcess(["get", "/held"], { env: cliEnv(store, { BYTESEEK_PORT: "9000" }) });
    expect(result).toMatchObject({ stdout: "", code: 1 });
    expect(result.stderr).toMatch(
      new RegExp(
        `^the store at ${store} is in use by another process that serves no byteseek socket beside it\n`,
      ),
    );
    expect(result.stderr).not.toContain("7411");
    expect(result.stderr).not.toContain("9000");
    expect(result.stderr).not.toContain("    at ");
  });

  it("keeps the versions BYTESEEK_HISTORY asks for, and refuses a malformed one before touching the store", async () => {
    const store = join(await temps.make(), "store");
    const env = cliEnv(store, { BYTESEEK_HISTORY: "/notes/=2" });
    for (const v of ["a", "b", "c", "d"]) {
      expect((await runInProcess(["set", "/notes/n", `string:${v}`], { env })).code).toBe(0);
      expect((await runInProcess(["set", "/other/n", `string:${v}`], { env })).code).toBe(0);
    }
    expect((await runInProcess(["history", "/notes/n"], { env })).stdout.split("\n")).toHaveLength(3);
    expect((await runInProcess(["history", "/other/n"], { env })).stdout).toBe("");
    expect(
      await runInProcess(["get", "/notes/n"], { env: cliEnv(store, { BYTESEEK_HISTORY: "/notes=2" }) }),
    ).toMatchObject({
      stdout: "",
      stderr:
        'BYTESEEK_HISTORY: history limit: "/notes=2" is not a count nor dir/=count (e.g. 10, or /byteseek/=10,/notes/=3)\n',
      code: 1,
    });
  });

  it("checks usage before opening the store, so a usage error wins over a lock", async () => {
    const store = join(await temps.make(), "store");
    held = await openTree({ backend: "classic", location: store });
    expect(await runInProcess(["get"], { env: cliEnv(store) })).toMatchObject({
      stdout: "",
      stderr: "kvspace get: missing <key>\nusage: kvspace get <key>...\n",
      code: 2,
    });
  });

  it("resolves a relative KVSPACE against the working directory and defaults to ./data", async () => {
    const cwd = await temps.make();
    const { KVSPACE: _store, ...env } = cliEnv("unused");
    expect(await runInProcess(["set", "/where", "string:default"], { env, cwd })).toMatchObject({
      stderr: "",
      code: 0,
    });
    expect(await runInProcess(["get", "/where"], { env: cliEnv("data"), cwd })).toMatchObject({
      stdout: "/where\tchar/utf8:default\n",
      stderr: "",
      code: 0,
    });
  });

  it("seeds a fresh folder on open, so the tour's first command shows byteseek's tree", async () => {
    const store = join(await temps.make(), "store");
    const result = await runInProcess(["tree", "--depth", "1", "/byteseek/"], { env: cliEnv(store) });
    expect(result).toMatchObject({ stderr: "", code: 0 });
    // the counts follow what ships (prompt parts, tools): only their presence is pinned here
    expect(result.stdout).toMatch(
      /^\/byteseek\/\n├── policy\t\{"workspaceRoots":\[\],"deny":\[\],"denyKeys":\["\/byteseek\/llm\/"…\n├── prompt\/\t\([1-9][0-9]*\)\n└── tools\/\t\([1-9][0-9]*\)\n$/,
    );
  });

  it("clear --yes leaves a reseeded /byteseek/, and says so", async () => {
    const store = join(await temps.make(), "store");
    const env = cliEnv(store);
    expect((await runInProcess(["set", "/mine/a", "int:1"], { env })).code).toBe(0);
    expect(await runInProcess(["clear", "--yes"], { env })).toMatchObject({
      stderr: "cleared; /byteseek/ holds the shipped prompts, tools and policy again\n",
      code: 0,
    });
    expect((await runInProcess(["tree", "--depth", "1", "/"], { env, cwd: store })).stdout).toBe(
      "/\n└── byteseek/\t(3)\n",
    );
  });

  it("deltree /byteseek/ --yes deletes its read-only keys too, without --force (#35)", async () => {
    const store = join(await temps.make(), "store");
    const env = cliEnv(store);
    expect((await runInProcess(["head", "/byteseek/policy"], { env })).stdout).toMatch(/\tro=1\t/);
    const r = await runInProcess(["deltree", "/byteseek/", "--yes", "-o", "json"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ key: "/byteseek/", removed: expect.any(Number) });
    expect(r.stderr).toMatch(/^deleted \/byteseek\/ \(\d+ keys\)\n$/);
    // read without seeding again: the read-only policy went with the rest
    const after = await runInProcess(["get", "/byteseek/policy"], { env: { ...env, BYTESEEK_SEED: "0" } });
    expect(after.stdout).toBe("/byteseek/policy\t(nil)\n");
  });

  it("asks on a terminal before clear, and a no deletes nothing", async () => {
    const store = join(await temps.make(), "store");
    const env = cliEnv(store, { BYTESEEK_SEED: "0" });
    expect((await runInProcess(["set", "/mine/a", "int:1"], { env })).code).toBe(0);
    const questions: string[] = [];
    const answer = (yes: boolean) => ({
      confirm: async (question: string) => {
        questions.push(question);
        return yes;
      },
    });
    expect(await runInProcess(["clear"], { env }, answer(false))).toMatchObject({
      stderr: "not confirmed: nothing deleted\n",
      code: 1,
    });
    expect(questions).toEqual([`Empty the whole store at ${store}?`]);
    expect((await runInProcess(["get", "/mine/a"], { env })).stdout).toBe("/mine/a\tint64:1\n");
    expect(await runInProcess(["deltree", "/"], { env }, answer(true))).toMatchObject({
      stderr: "deleted / (2 keys)\n",
      code: 0,
    });
    expect(questions[1]).toBe("Delete / and everything under it, read-only keys included?");
    expect((await runInProcess(["get", "/mine/a"], { env })).stdout).toBe("/mine/a\t(nil)\n");
  });

  it("refuses a malformed KVSPACE without creating a folder of that name", async () => {
    const cwd = await temps.make();
    expect(await runInProcess(["get", "/a"], { env: cliEnv("htp://x"), cwd })).toMatchObject({
      stdout: "",
      stderr:
        "KVSPACE=htp://x is neither a folder nor a store URL; use a folder (./data), etcd://host:2379[/prefix] or http://host:port\n",
      code: 1,
    });
    expect(existsSync(join(cwd, "htp:"))).toBe(false);
    expect(await readdir(cwd)).toEqual([]);
  });

  it("refuses a malformed BYTESEEK_SEED, naming it, before touching the store", async () => {
    const store = join(await temps.make(), "store");
    expect(await runInProcess(["get", "/a"], { env: cliEnv(store, { BYTESEEK_SEED: "yes" }) })).toMatchObject(
      {
        stdout: "",
        stderr:
          'BYTESEEK_SEED must be 1 (write the shipped prompts, tools and policy into the store on open) or 0 (do not), got "yes"\n',
        code: 1,
      },
    );
  });
});
