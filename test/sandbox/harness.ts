/**
 * A runtime whose commands run in the sandbox, over real folders: a workspace holding a denied
 * folder, a planted credential under a HOME inside it and the store's folder (with its socket); a
 * folder outside every root; and the two routes a command takes (shell.run and a `shell` impl).
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { seedTools } from "../../tools/catalogue/seed.js";
import type { PolicyInput } from "../../tools/gate/policy.js";
import { DEFAULT_GRANT } from "../../tools/gate/powers.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { createSandboxRunner, type SandboxRunner } from "../../tools/sandbox/runner.js";
import { createShellTools } from "../../tools/shell/index.js";
import type { ToolResult } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { declare, setPolicy, silent } from "../tools/helpers.js";

/** What a probe must never see. */
export const SECRET = "sandbox-canary-8f2c1e";

/** The policy of the harness: a denied folder, and runs that hold less than the default. */
export function harnessPolicy(extra: PolicyInput = {}): PolicyInput {
  return {
    deny: ["private"],
    grants: {
      default: DEFAULT_GRANT,
      runs: [
        { vid: "reader", grant: { write: false } },
        { vid: "blind", grant: { read: false, write: false } },
      ],
    },
    ...extra,
  };
}

export interface Sandboxed {
  tree: Tree;
  runtime: Runtime;
  /** Real path of the workspace. */
  ws: string;
  /** A folder outside every root. */
  outside: string;
  /** The store's folder (inside the workspace: the hard case) and its socket. */
  store: string;
  socket: string;
  /** The server's HOME (inside the workspace), holding .ssh/id_ed25519. */
  home: string;
  /** Both routes: shell.run with `script`, and a shell impl running bash -c `script`. */
  run(script: string, vid?: string): Promise<ToolResult[]>;
  close(): Promise<void>;
}

export async function openSandboxed(
  options: { runner?: SandboxRunner; policy?: PolicyInput } = {},
): Promise<Sandboxed> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "byteseek-sandbox-test-")));
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  const store = join(ws, "store");
  const home = join(ws, "home");
  await mkdir(join(ws, "private"), { recursive: true });
  await mkdir(outside);
  await mkdir(store);
  await mkdir(join(home, ".ssh"), { recursive: true });
  await writeFile(join(ws, "private", "key.txt"), SECRET);
  await writeFile(join(home, ".ssh", "id_ed25519"), SECRET);
  await writeFile(join(store, "CURRENT"), SECRET);
  await writeFile(join(outside, "note.txt"), SECRET);
  await symlink(outside, join(ws, "out"));
  const socket = join(store, "mcp.sock");
  const server: Server = createServer((c) => c.end(SECRET));
  await new Promise<void>((r) => server.listen(socket, r));

  const tree = await openTree({ backend: "memory" });
  const builtins = createShellTools();
  await seedTools({ tree, builtins });
  await setPolicy(tree, options.policy ?? harnessPolicy());
  await declare(tree, {
    name: "probe.sh",
    description: "runs a probe script",
    params: { type: "object", properties: { script: { type: "string" } }, required: ["script"] },
    impl: { kind: "shell", argv: ["bash", "-c", "{script}"] },
  });
  const runtime = createRuntime({
    tree,
    builtins,
    logger: silent,
    workspace: ws,
    hiddenPaths: [store],
    scratchParent: base,
    env: { PATH: process.env.PATH, HOME: home, BYTESEEK_LLM_KEY: SECRET },
    ...(options.runner ? { sandbox: options.runner } : {}),
  });
  return {
    tree,
    runtime,
    ws,
    outside,
    store,
    socket,
    home,
    async run(script, vid = "probe") {
      const shell = await runtime.call("shell.run", { command: script }, { vid });
      const impl = await runtime.call("probe.sh", { script }, { vid });
      return [shell, impl];
    },
    async close() {
      await runtime.close();
      await tree.close();
      await new Promise((r) => server.close(r));
      await rm(base, { recursive: true, force: true });
    },
  };
}

/**
 * One sandboxed runtime with the real runner (bubblewrap) for the whole describe it is called in,
 * handed to `got` before its tests run and closed after them.
 */
export function useSandboxed(got: (s: Sandboxed) => void): void {
  const runner = createSandboxRunner();
  let s: Sandboxed | undefined;
  beforeAll(async () => {
    s = await openSandboxed({ runner });
    got(s);
  });
  afterAll(async () => {
    await s?.close();
    await runner.close();
  });
}

/** Every route failed, with `said` in what the model reads, and never the secret. */
export function refused(results: ToolResult[], said: RegExp): void {
  for (const r of results) {
    expect(r.isError, r.text).toBe(true);
    expect(r.text).toMatch(said);
    expect(r.text).not.toContain(SECRET);
  }
}
