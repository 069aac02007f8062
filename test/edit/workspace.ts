import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { expect } from "vitest";
import { createKeyedLock } from "../../tools/call/locks.js";
import { ToolError, type ToolErrorCode } from "../../tools/errors.js";
import { createCommandScope, createScratchRoot } from "../../tools/process/scope.js";
import type { BuiltinTool, ToolContext, ToolOutput } from "../../tools/types.js";
import { openTree } from "../../tree/index.js";

/** A temp folder holding the workspace `root` (and room for a sibling `root-evil`), with a ToolContext. */
export interface TestWorkspace {
  /** The parent of root: siblings like root-evil go here. */
  dir: string;
  root: string;
  ctx: ToolContext;
  abort: AbortController;
  call(tool: BuiltinTool, args: Record<string, unknown>): Promise<ToolOutput>;
  cleanup(): Promise<void>;
}

export interface WorkspaceOptions {
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  /** The environment commands take allowed variables from (default process.env). */
  env?: Record<string, string | undefined>;
  passEnv?: string[];
  outputCapBytes?: number;
}

export async function makeWorkspace(options: WorkspaceOptions = {}): Promise<TestWorkspace> {
  const dir = await mkdtemp(path.join(tmpdir(), "byteseek-edit-"));
  const root = path.join(dir, "root");
  await mkdir(root);
  const tree = await openTree({ backend: "memory" });
  const abort = new AbortController();
  const ctx: ToolContext = {
    vid: "test",
    signal: abort.signal,
    workspace: root,
    tree,
    logger: pino({ level: "silent" }),
    locks: createKeyedLock(),
    defaultTimeoutMs: options.defaultTimeoutMs ?? 120_000,
    maxTimeoutMs: options.maxTimeoutMs ?? 3_600_000,
    commands: createCommandScope({
      source: options.env ?? process.env,
      passEnv: options.passEnv ?? [],
      outputCapBytes: options.outputCapBytes ?? 16 * 1024 * 1024,
      root: createScratchRoot(dir),
      sandbox: { mode: "off" },
    }),
  };
  return {
    dir,
    root,
    ctx,
    abort,
    call: (tool, args) => tool.execute(args, ctx),
    async cleanup() {
      await tree.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Awaits a call that must fail and checks its code (and kind when given); answers the error. */
export async function failure(
  promise: Promise<unknown>,
  code: ToolErrorCode,
  kind?: ToolError["kind"],
): Promise<ToolError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a ToolError ${code}`).toBeInstanceOf(ToolError);
  const te = err as ToolError;
  expect(te.code, te.message).toBe(code);
  if (kind) expect(te.kind).toBe(kind);
  return te;
}

/** Names in a folder that look like our temp files. */
export async function tempResidue(dir: string): Promise<string[]> {
  const names = await readdir(dir, { recursive: true });
  return names.filter((n) => String(n).includes(".byteseek-tmp-"));
}
