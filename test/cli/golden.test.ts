import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { GOLDEN_SCRIPTS } from "./golden-cases.js";
import { assertBuilt, runCli } from "./run-cli.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** The child's environment: this one without anything that would change where or how kvspace runs. */
function cliEnv(store: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { KVSPACE_DEBUG: _debug, BYTESEEK_HOST: _host, BYTESEEK_PORT: _port, ...env } = process.env;
  return { ...env, KVSPACE: store, ...extra };
}

const temps: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "kvspace-golden-"));
  temps.push(dir);
  return dir;
}

beforeAll(assertBuilt);
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

for (const script of GOLDEN_SCRIPTS) {
  describe(`kvspace golden: ${script.name}`, () => {
    let store = "";
    beforeAll(async () => {
      store = join(await tempDir(), "store");
    });

    for (const c of script.cases) {
      const test = script.independent ? it.concurrent : it;
      test(`${c.name}: kvspace ${c.args.join(" ")}`, async () => {
        const where = script.independent ? join(await tempDir(), "store") : store;
        const result = await runCli(c.args, {
          env: cliEnv(where),
          cwd: REPO,
          ...(c.stdin === undefined ? {} : { stdin: c.stdin }),
          ...(c.interruptAfterLines === undefined ? {} : { interruptAfterLines: c.interruptAfterLines }),
        });
        expect({ stdout: result.stdout, stderr: result.stderr, code: result.code }).toEqual({
          stdout: c.stdout,
          stderr: c.stderr ?? "",
          code: c.code ?? 0,
        });
      });
    }
  });
}

describe("kvspace golden: the embedded store", () => {
  let held: Tree | undefined;
  afterEach(async () => {
    await held?.close();
    held = undefined;
  });

  it("says a locked store is in use and how to reach it through the server, without a stack", async () => {
    const store = join(await tempDir(), "store");
    held = await openTree({ backend: "classic", location: store });
    await held.set("/held", { kind: "int64", value: 1n });
    const result = await runCli(["get", "/held"], { env: cliEnv(store) });
    expect(result).toMatchObject({
      stdout: "",
      stderr:
        `the store at ${store} is in use by another process (a running byteseek server?)\n` +
        "to go through the server, set KVSPACE=http://127.0.0.1:7411\n",
      code: 1,
    });
  });

  it("names the configured server port when the store is locked", async () => {
    const store = join(await tempDir(), "store");
    held = await openTree({ backend: "classic", location: store });
    const result = await runCli(["ls", "/"], { env: cliEnv(store, { BYTESEEK_PORT: "9000" }) });
    expect(result.stderr).toBe(
      `the store at ${store} is in use by another process (a running byteseek server?)\n` +
        "to go through the server, set KVSPACE=http://127.0.0.1:9000\n",
    );
    expect(result.code).toBe(1);
  });

  it("checks usage before opening the store, so a usage error wins over a lock", async () => {
    const store = join(await tempDir(), "store");
    held = await openTree({ backend: "classic", location: store });
    const result = await runCli(["get"], { env: cliEnv(store) });
    expect(result).toMatchObject({ stdout: "", stderr: "usage: kvspace get <key>...\n", code: 2 });
  });

  it("refuses an http:// KVSPACE for now, saying so", async () => {
    const result = await runCli(["get", "/a"], { env: cliEnv("http://127.0.0.1:7411") });
    expect(result).toMatchObject({
      stdout: "",
      stderr:
        "KVSPACE=http://127.0.0.1:7411: reaching a byteseek server over HTTP is not supported yet; set KVSPACE to a store folder\n",
      code: 1,
    });
  });

  it("resolves a relative KVSPACE against the working directory and defaults to ./data", async () => {
    const cwd = await tempDir();
    const { KVSPACE: _store, ...env } = cliEnv("unused");
    const set = await runCli(["set", "/where", "string:default"], { env, cwd });
    expect(set).toMatchObject({ stderr: "", code: 0 });
    const get = await runCli(["get", "/where"], { env: cliEnv("data"), cwd });
    expect(get).toMatchObject({ stdout: "/where\tchar/utf8:default\n", stderr: "", code: 0 });
  });
});
