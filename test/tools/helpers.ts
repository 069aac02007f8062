import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach } from "vitest";
import { z } from "zod";
import { paramsFromZod } from "../../tools/catalogue/json-schema.js";
import { seedTools } from "../../tools/catalogue/seed.js";
import { ToolError } from "../../tools/errors.js";
import { POLICY_KEY, type PolicyInput } from "../../tools/gate/policy.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../../tools/runtime.js";
import { createTreeTools } from "../../tools/tree/tools.js";
import type { BuiltinTool, ToolDeclarationInput } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { type Json, json } from "../../tree/value.js";

export const silent = pino({ level: "silent" });

export type Backend = "memory" | "classic";
export const BACKENDS: Backend[] = ["memory", "classic"];

/** A fresh empty folder under the system temp dir, and how to remove it. */
export async function tempDir(
  prefix = "byteseek-tools-",
): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Hooks a test can use to see a builtin start, so it can abort it without timing guesses. */
export interface Probe {
  started: Array<() => void>;
}

/** The tiny registry the tests call through: no-op, echo, failures, and a tool that hangs. */
export function testBuiltins(probe: Probe = { started: [] }): BuiltinTool[] {
  const decl = (name: string, extra: Partial<ToolDeclarationInput> = {}): ToolDeclarationInput => ({
    name,
    description: `test tool ${name}`,
    snippet: `${name} — for tests`,
    params: { type: "object", properties: {}, additionalProperties: false },
    impl: { kind: "builtin", ref: name },
    ...extra,
  });
  const EchoArgs = z.object({ text: z.string(), times: z.number().int().min(1).max(3).default(1) }).strict();
  return [
    {
      ref: "test.noop",
      declaration: decl("test.noop", { sequential: false }),
      execute: async () => ({ text: "done" }),
    },
    {
      ref: "test.echo",
      declaration: decl("test.echo", { params: paramsFromZod(EchoArgs) }),
      execute: async (args) => {
        const a = EchoArgs.parse(args);
        return { text: a.text.repeat(a.times), details: { length: a.text.length } };
      },
    },
    {
      ref: "test.fail",
      declaration: decl("test.fail"),
      execute: async () => {
        throw new ToolError("not_found", "nothing matched: include more context", {
          details: { lines: [4, 9] },
        });
      },
    },
    {
      ref: "test.boom",
      declaration: decl("test.boom"),
      execute: async () => {
        throw new Error("kaboom");
      },
    },
    {
      ref: "test.hang",
      declaration: decl("test.hang", { timeoutMs: 200 }),
      execute: (_args, ctx) =>
        new Promise((_resolve, reject) => {
          for (const f of probe.started.splice(0)) f();
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
        }),
    },
    {
      ref: "test.big",
      declaration: decl("test.big"),
      execute: async () => ({ text: `${"0123456789abcdef\n".repeat(6000)}END` }),
    },
    {
      ref: "test.ctx",
      declaration: decl("test.ctx"),
      execute: async (_args, ctx) => ({
        text: "ctx",
        details: { workspace: ctx.workspace, vid: ctx.vid, defaultTimeoutMs: ctx.defaultTimeoutMs },
      }),
    },
  ];
}

export interface Harness {
  tree: Tree;
  runtime: Runtime;
  builtins: BuiltinTool[];
  workspace: string;
  probe: Probe;
  dispose(): Promise<void>;
}

/**
 * A tree (memory or classic in a temp dir) seeded with `builtins` (by default the test and tree
 * tools), a fresh workspace folder, and a runtime over both.
 */
export async function harness(
  backend: Backend = "memory",
  extra: Partial<Omit<RuntimeOptions, "tree" | "builtins" | "logger" | "workspace">> = {},
  tools?: BuiltinTool[],
): Promise<Harness> {
  const store = backend === "classic" ? await tempDir("byteseek-tools-db-") : undefined;
  const ws = await tempDir("byteseek-tools-ws-");
  const tree = store
    ? await openTree({ backend: "classic", location: store.path })
    : await openTree({ backend: "memory" });
  const probe: Probe = { started: [] };
  const builtins = tools ?? [...testBuiltins(probe), ...createTreeTools()];
  await seedTools({ tree, builtins });
  const runtime = createRuntime({ tree, builtins, logger: silent, workspace: ws.path, ...extra });
  return {
    tree,
    runtime,
    builtins,
    workspace: runtime.workspace,
    probe,
    async dispose() {
      await runtime.close();
      await tree.close();
      await ws.remove();
      await store?.remove();
    },
  };
}

/**
 * A fresh harness for each test of the enclosing describe (made in beforeEach, disposed in
 * afterEach), read through the returned view: `h.tree`, `h.runtime` are the current test's.
 */
export function useHarness(...args: Parameters<typeof harness>): Omit<Harness, "dispose"> {
  let current: Harness | undefined;
  beforeEach(async () => {
    current = await harness(...args);
  });
  afterEach(async () => {
    await current?.dispose();
    current = undefined;
  });
  const now = (): Harness => {
    if (!current) throw new Error("the harness exists only inside a test");
    return current;
  };
  return {
    get tree() {
      return now().tree;
    },
    get runtime() {
      return now().runtime;
    },
    get builtins() {
      return now().builtins;
    },
    get workspace() {
      return now().workspace;
    },
    get probe() {
      return now().probe;
    },
  };
}

/** Replaces the (read-only) policy, as a person would: forced. */
export async function setPolicy(tree: Tree, policy: PolicyInput): Promise<void> {
  await tree.set(POLICY_KEY, json(policy as Json), { ro: true, force: true });
}

/** A policy granting every run every power, `net` to `hosts` only (`host:port`), as a person would set it. */
export async function grantEverything(tree: Tree, hosts: string[]): Promise<void> {
  await setPolicy(tree, {
    grants: {
      default: { read: true, write: true, exec: true, model: true, net: hosts, tree: ["/"] },
    },
  });
}

/** A person changes fields of the stored declaration of `name` (e.g. `{ enabled: true }`). */
export async function personEdits(tree: Tree, name: string, change: Record<string, unknown>): Promise<void> {
  const node = await tree.get(`/byteseek/tools/${name}`);
  const value = node?.kind === "json" ? (node.value.value as Record<string, Json>) : {};
  await tree.set(`/byteseek/tools/${name}`, json({ ...value, ...change } as Json));
}

/** A shell tool a run may declare: counts the words of `text`. */
export const wcDeclaration = {
  name: "text.wc",
  description: "count words",
  snippet: "text.wc(text) — count words",
  params: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  impl: { kind: "shell", argv: ["sh", "-c", 'printf "%s" "$0" | wc -w', "{text}"] },
};

/** Writes a declaration as a person would (no owner) or, with `vid`, as a run would. */
export async function declare(tree: Tree, decl: Record<string, unknown>, vid?: string): Promise<void> {
  await tree.set(`/byteseek/tools/${String(decl.name)}`, json(decl as Json), vid ? { vid } : {});
}

/** The JSON value of a record key. */
export async function recordAt(tree: Tree, key: string): Promise<Record<string, unknown>> {
  const node = await tree.get(key);
  if (node?.kind !== "json") throw new Error(`no record at ${key}`);
  return node.value.value as Record<string, unknown>;
}

/** Resolves when `probe`'s next builtin call starts. */
export function nextStart(probe: Probe): Promise<void> {
  return new Promise((resolve) => probe.started.push(resolve));
}

/** A file tool of the edit family, as far as the gate can tell: it only echoes its path. */
export const peek: BuiltinTool = {
  ref: "edit.peek",
  declaration: {
    name: "edit.peek",
    description: "echo a path",
    params: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    impl: { kind: "builtin", ref: "edit.peek" },
  },
  execute: async (args) => ({ text: `peeked ${String(args.path)}` }),
};
