/**
 * The quick path (cli/quick.ts): a plain tree command loads the tree and nothing heavy — so a
 * later import added to it fails here rather than silently slowing every script down. Each case
 * spawns the built kvspace with a loader hook that records every module it loads (ESM, and the
 * CommonJS entry points ESM imports), on the embedded store and against a server. How fast it is
 * is measured in bench/cli.ts, never here.
 */
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getCommand, listCommand, setCommand } from "../../cli/commands/index.js";
import { parsePlain } from "../../cli/quick.js";
import { type CliServer, cliEnv, startCliServer, tempDirs } from "./cli-server.js";
import { assertBuilt, KVSPACE_BIN } from "./run-cli.js";

const temps = tempDirs("kvspace-quick-");

/** What the plain path must never load: the CLI framework, schemas, the runtime, HTTP server and client libraries. */
const HEAVY = [
  /\/node_modules\/commander\//,
  /\/node_modules\/zod\//,
  /\/node_modules\/ajv/,
  /\/node_modules\/@modelcontextprotocol\//,
  /\/node_modules\/fastify/,
  /\/node_modules\/pino/,
  /\/node_modules\/undici\//,
  /\/node_modules\/diff\//,
  /\/dist\/(agent|mcp|server|prompts)\//,
  /\/dist\/tools\/(?!process\/secrets\.js|run-id\.js|mcp\/secret-fields\.js|mcp\/masked-view\.js)/,
  /\/dist\/cli\/(run|open-store|tools-client|commander-output)\.js$/,
  /\/dist\/cli\/commands\/index\.js$/,
];

let hook = "";
let store = "";
let server: CliServer | undefined;

beforeAll(async () => {
  assertBuilt();
  const dir = await temps.make();
  // The hook runs off the main thread (module.register): it appends each URL it loads to a file.
  const loader = join(dir, "loader.mjs");
  await writeFile(
    loader,
    [
      'import { appendFileSync } from "node:fs";',
      "export async function load(url, context, next) {",
      '  if (!url.startsWith("node:")) appendFileSync(process.env.QUICK_LOADS, url + "\\n");',
      "  return next(url, context);",
      "}",
    ].join("\n"),
  );
  hook = join(dir, "hook.mjs");
  await writeFile(
    hook,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(loader).href)});\n`,
  );
  store = join(dir, "store");
  server = await startCliServer({ store: join(dir, "served"), workspace: dir });
});

afterAll(async () => {
  await server?.close();
  await temps.removeAll();
});

/** Runs kvspace with the hook; answers its output and the modules it loaded. */
async function traced(args: string[], env: NodeJS.ProcessEnv) {
  const loads = join(await temps.make(), "loads.txt");
  await writeFile(loads, "");
  const child = spawn(process.execPath, ["--import", hook, KVSPACE_BIN, ...args], {
    env: { ...env, QUICK_LOADS: loads },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const loaded = (await readFile(loads, "utf8")).split("\n").filter(Boolean);
  return { stdout, stderr, code, loaded, heavy: loaded.filter((u) => HEAVY.some((re) => re.test(u))) };
}

describe("kvspace's quick path", () => {
  it("sets and gets on the embedded store loading the tree and classic-level, nothing heavy", async () => {
    const env = cliEnv(store, { BYTESEEK_SEED: "0" });
    const set = await traced(["set", "/q/a", "int:7"], env);
    expect({ code: set.code, stderr: set.stderr, heavy: set.heavy }).toEqual({
      code: 0,
      stderr: "",
      heavy: [],
    });
    const get = await traced(["get", "/q/a"], env);
    expect(get.stdout).toBe("/q/a\tint64:7\n");
    expect(get.heavy).toEqual([]);
    expect(get.loaded.some((u) => u.includes("/node_modules/classic-level/"))).toBe(true);
    expect(get.loaded.some((u) => u.endsWith("/dist/cli/quick.js"))).toBe(true);
    const mv = await traced(["mv", "/q/a", "/q/moved"], env);
    expect({ code: mv.code, stderr: mv.stderr, heavy: mv.heavy }).toEqual({ code: 0, stderr: "", heavy: [] });
    expect(mv.loaded.some((u) => u.endsWith("/dist/tree/transfer.js"))).toBe(true);
  });

  it("appends, makes a directory, draws a tree and prints a value's history on the embedded store, nothing heavy", async () => {
    const env = cliEnv(store, { BYTESEEK_SEED: "0" });
    const append = await traced(["append", "/t/", "int:1"], env);
    expect({ stdout: append.stdout, code: append.code, heavy: append.heavy }).toEqual({
      stdout: "/t/0\n",
      code: 0,
      heavy: [],
    });
    const mkindex = await traced(["mkindex", "/t/sub/"], env);
    expect({ code: mkindex.code, stderr: mkindex.stderr, heavy: mkindex.heavy }).toEqual({
      code: 0,
      stderr: "",
      heavy: [],
    });
    const tree = await traced(["tree", "--depth", "1", "/t/"], env);
    expect(tree.stdout).toBe("/t/\n├── 0\t1\n└── sub/\n");
    expect(tree.heavy).toEqual([]);
    const history = await traced(["history", "/t/0"], env);
    expect(history.code).toBe(0);
    expect(history.stderr).toContain("has no previous versions kept");
    expect(history.heavy).toEqual([]);
    expect(history.loaded.some((u) => u.endsWith("/dist/cli/quick.js"))).toBe(true);
  });

  it("exports on the embedded store, nothing heavy, a registry entry's secrets still masked", async () => {
    const env = cliEnv(store, { BYTESEEK_SEED: "0" });
    // a write under /byteseek/ takes the full, checked path
    const entry = { command: ["true"], env: { API_TOKEN: "s3cret-quick" } };
    expect((await traced(["set", "/byteseek/mcp/quicksrv", `json:${JSON.stringify(entry)}`], env)).code).toBe(
      0,
    );
    const out = await traced(["export", "/byteseek/mcp/"], env);
    expect({ code: out.code, stderr: out.stderr, heavy: out.heavy }).toEqual({
      code: 0,
      stderr: "",
      heavy: [],
    });
    expect(out.loaded.some((u) => u.endsWith("/dist/cli/quick.js"))).toBe(true);
    expect(out.stdout).toContain('"API_TOKEN":"***"');
    expect(out.stdout).not.toContain("s3cret-quick");
    const whole = await traced(["export", "/byteseek/mcp/", "--secrets"], env);
    expect(whole.stdout).toContain("s3cret-quick");
    expect(whole.heavy).toEqual([]);
  });

  it("lists and reads metadata through a server without undici, zod or commander", async () => {
    const env = cliEnv(server?.url ?? "");
    expect((await traced(["set", "/q/b", "string:over http"], env)).code).toBe(0);
    const list = await traced(["list", "/q/"], env);
    expect(list.stdout).toBe("b\tchar/utf8\tover http\n");
    expect(list.heavy).toEqual([]);
    const head = await traced(["head", "/q/b"], env);
    expect(head.stdout).toMatch(/^\/q\/b\tchar\/utf8\tro=0\tversion=1\t/);
    expect(head.heavy).toEqual([]);
    // the server searches: one request, nothing heavy here
    const grep = await traced(["grep", "over", "/q/"], env);
    expect(grep.stdout).toBe("/q/b:1:over http\n");
    expect(grep.heavy).toEqual([]);
  });

  it("leaves a write under /byteseek/ to the full dispatcher", async () => {
    const env = cliEnv(store, { BYTESEEK_SEED: "0" });
    // a write under /byteseek/ is checked (declarations, the policy, ownership): the runtime's modules load
    const guarded = await traced(["set", "/byteseek/notes", "string:x"], env);
    expect(guarded.code).toBe(0);
    expect(guarded.loaded.some((u) => u.endsWith("/dist/tools/catalogue/checked-tree.js"))).toBe(true);
  });

  it("reads a command line as commander does, or declines it", () => {
    expect(parsePlain(setCommand, ["/a", "int:1", "ro", "--force"])).toEqual({
      input: { positionals: ["/a", "int:1", "ro"], flags: { force: true } },
      output: "text",
      quiet: false,
    });
    expect(parsePlain(listCommand, ["--kind=false", "-o", "ndjson", "/d/", "-q"])).toEqual({
      input: { positionals: ["/d/"], flags: { kind: false } },
      output: "ndjson",
      quiet: true,
    });
    expect(parsePlain(getCommand, ["--output=json", "--", "/a"])?.output).toBe("json");
    expect(parsePlain(getCommand, ["--", "-o"])?.input).toEqual({ positionals: ["-o"], flags: {} });
    // a format the command does not take is commander's to refuse, naming those it takes
    expect(parsePlain(setCommand, ["/a", "int:1", "-o", "ndjson"])).toBeUndefined();
    expect(parsePlain(getCommand, ["/a", "-h"])).toBeUndefined();
    expect(parsePlain(getCommand, [])).toBeUndefined();
    expect(parsePlain(listCommand, ["--kind=maybe", "/d/"])).toBeUndefined();
    expect(parsePlain(setCommand, ["/a", "int:1", "--nope"])).toBeUndefined();
  });
});
