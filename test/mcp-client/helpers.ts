import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createMcpClient, type McpClient } from "../../tools/mcp/client.js";
import type { HostLookup } from "../../tools/net/host-rules.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { type Json, json } from "../../tree/value.js";
import { silent, tempDir } from "../tools/helpers.js";

const require = createRequire(import.meta.url);

/** The entry script of an installed reference server (its package's `bin`). */
export function serverScript(pkg: "server-everything" | "server-filesystem"): string {
  const manifest = require.resolve(`@modelcontextprotocol/${pkg}/package.json`);
  return join(dirname(manifest), "dist", "index.js");
}

/**
 * What a test's stdio servers need to see besides the workspace: this checkout (the fixtures) and
 * its node_modules where it really is (a worktree may link it from elsewhere). A person's entry
 * lists them as `readOnlyPaths`; the sandbox shows nothing else outside the workspace.
 */
export const TEST_INSTALL: string[] = [
  ...new Set([
    join(import.meta.dirname, "..", ".."),
    realpathSync(join(import.meta.dirname, "..", "..", "node_modules")),
  ]),
];

/** A unique tag put in an upstream's environment, so a test finds every process it left. */
export function newTag(): string {
  return randomBytes(8).toString("hex");
}

/** The pids of this user's processes whose environment holds BYTESEEK_TEST_TAG=<tag>. */
export async function taggedProcesses(tag: string): Promise<number[]> {
  const needle = Buffer.from(`BYTESEEK_TEST_TAG=${tag}\0`);
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    const env = await readFile(`/proc/${name}/environ`).catch(() => undefined);
    if (env && env.indexOf(needle) !== -1) found.push(Number(name));
  }
  return found;
}

/** `{command: [node, everything, stdio]}` with a tag in its environment. */
export function everythingStdio(tag: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    command: [process.execPath, serverScript("server-everything"), "stdio"],
    env: { BYTESEEK_TEST_TAG: tag },
    readOnlyPaths: TEST_INSTALL,
    ...extra,
  };
}

export interface McpHarness {
  tree: Tree;
  runtime: Runtime;
  mcp: McpClient;
  workspace: string;
  register(server: string, entry: Record<string, unknown>, vid?: string): Promise<void>;
  decl(name: string): Promise<Record<string, unknown> | undefined>;
  dispose(): Promise<void>;
}

export async function mcpHarness(
  env: Readonly<Record<string, string | undefined>> = process.env,
  lookup?: HostLookup,
): Promise<McpHarness> {
  const ws = await tempDir("byteseek-mcpc-ws-");
  const tree = await openTree({ backend: "memory" });
  const builtins = createTreeTools();
  await seedTools({ tree, builtins });
  const mcp = createMcpClient({
    tree,
    logger: silent,
    workspace: ws.path,
    env,
    ...(lookup ? { lookup } : {}),
  });
  const runtime = createRuntime({ tree, builtins, logger: silent, workspace: ws.path, mcp });
  return {
    tree,
    runtime,
    mcp,
    workspace: runtime.workspace,
    async register(server, entry, vid) {
      await tree.set(`/byteseek/mcp/${server}`, json(entry as Json), vid ? { vid } : {});
    },
    async decl(name) {
      const node = await tree.get(`/byteseek/tools/${name}`);
      return node?.kind === "json" ? (node.value.value as Record<string, unknown>) : undefined;
    },
    async dispose() {
      await mcp.close();
      await runtime.close();
      await tree.close();
      await ws.remove();
    },
  };
}

/** Polls `check` (every 20 ms, up to `ms`: generous, as test files share the cores) until it answers true. */
export async function until(check: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
