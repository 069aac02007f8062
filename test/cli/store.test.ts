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

  it("says a locked store is in use and how to reach it through the server, without a stack", async () => {
    const store = join(await temps.make(), "store");
    held = await openTree({ backend: "classic", location: store });
    await held.set("/held", { kind: "int64", value: 1n });
    expect(await runInProcess(["get", "/held"], { env: cliEnv(store) })).toMatchObject({
      stdout: "",
      stderr:
        `the store at ${store} is in use by another process (a running byteseek server?)\n` +
        "to go through the server, set KVSPACE=http://127.0.0.1:7411\n",
      code: 1,
    });
  });

  it("names the configured server port when the store is locked", async () => {
    const store = join(await temps.make(), "store");
    held = await openTree({ backend: "classic", location: store });
    const result = await runInProcess(["ls", "/"], { env: cliEnv(store, { BYTESEEK_PORT: "9000" }) });
    expect(result.stderr).toBe(
      `the store at ${store} is in use by another process (a running byteseek server?)\n` +
        "to go through the server, set KVSPACE=http://127.0.0.1:9000\n",
    );
    expect(result.code).toBe(1);
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
      stderr: "usage: kvspace get <key>...\n",
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
});
