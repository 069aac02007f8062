/**
 * What a `byteseek run` does not load. Every run, chat, worker and server start pays for each module
 * it imports (bench/RESULTS.md, "Kills"); what a run may not need is imported at its first use:
 * the MCP client and SDK when an MCP server is used (tools/mcp/lazy-client.ts), the HTTP app and the
 * MCP sessions of the folder's socket at its first connection (cli/hold-share.ts), undici at the
 * first model request or http call. A real child process, its modules recorded by a load hook
 * (test/fixtures/record-modules.mjs).
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { tempDir } from "../tools/helpers.js";
import { byteseek, needBuiltCli } from "./helpers.js";

const RECORD = fileURLToPath(new URL("../fixtures/record-modules.mjs", import.meta.url));

/** Runs the built byteseek with the load hook; answers how it ended and every module URL it loaded. */
async function recorded(args: string[], env: NodeJS.ProcessEnv, list: string) {
  const r = await byteseek(args, { ...env, RECORD_MODULES: list }, undefined, {
    nodeArgs: ["--import", RECORD],
  });
  const modules = (await readFile(list, "utf8")).split("\n").filter(Boolean);
  return { ...r, modules };
}

/** Loaded modules matching `pattern` (a package's folder, a byteseek module's path). */
const loaded = (modules: string[], pattern: RegExp) => modules.filter((m) => pattern.test(m));

const MCP_SDK = /\/node_modules\/@modelcontextprotocol\//;
/** byteseek's MCP server, and the client's parts that reach upstream (the registry's documents are read by the gate) */
const MCP_PARTS =
  /\/dist\/(mcp\/|tools\/mcp\/(client|upstream[a-z-]*|oauth\/(device|sign-in|failure|provider))\.js$)/;
const HTTP_APP = /\/node_modules\/fastify\/|\/dist\/server\/app\.js$/;
const UNDICI = /\/node_modules\/undici\//;

describe("a byteseek run with no MCP server registered", () => {
  let dir: { path: string; remove(): Promise<void> };
  let fake: FakeLlm;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    needBuiltCli();
    dir = await tempDir("byteseek-lazy-");
    await mkdir(join(dir.path, "ws"));
    fake = await startFakeLlm();
    env = {
      PATH: process.env.PATH,
      KVSPACE: join(dir.path, "db"),
      BYTESEEK_WORKSPACE: join(dir.path, "ws"),
      BYTESEEK_LLM_API: "openai",
      BYTESEEK_LLM_URL: `${fake.url}/v1`,
      BYTESEEK_LLM_MODEL: "fake-1",
      BYTESEEK_LLM_MAX_RETRIES: "0",
    };
  });

  afterAll(async () => {
    await fake.close();
    await dir.remove();
  });

  it("composes, seeds and drives a turn with a tool call, loading no MCP SDK, no MCP client and no HTTP app", async () => {
    fake.script(
      { toolCalls: [{ name: "tree.set", args: { key: "/notes/a", value: "one" } }] },
      { text: "Noted." },
    );
    const r = await recorded(["run", "note one", "--vid", "lazy1"], env, join(dir.path, "run.txt"));
    expect(r.stderr).toMatch(/^vid lazy1/);
    expect(r.stdout).toContain("→ tree.set");
    expect(r.stdout).toContain("Noted.");
    expect(r.code).toBe(0);
    // the hook saw the run's parts: the runtime, the store, the model's connection
    expect(loaded(r.modules, /\/dist\/tools\/runtime\.js$/)).toHaveLength(1);
    expect(loaded(r.modules, /\/node_modules\/classic-level\//).length).toBeGreaterThan(0);
    expect(loaded(r.modules, UNDICI).length).toBeGreaterThan(0);
    expect(loaded(r.modules, MCP_SDK)).toEqual([]);
    expect(loaded(r.modules, MCP_PARTS)).toEqual([]);
    expect(loaded(r.modules, HTTP_APP)).toEqual([]);
  });

  it("replays the run without undici either: no model request, no http call, no MCP", async () => {
    const r = await recorded(["run", "--replay", "lazy1"], env, join(dir.path, "replay.txt"));
    expect(r.stdout).toContain("Noted.");
    expect(r.code).toBe(0);
    expect(loaded(r.modules, /\/dist\/tools\/runtime\.js$/)).toHaveLength(1);
    expect(loaded(r.modules, UNDICI)).toEqual([]);
    expect(loaded(r.modules, MCP_SDK)).toEqual([]);
    expect(loaded(r.modules, HTTP_APP)).toEqual([]);
  });
});
