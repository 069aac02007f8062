/**
 * What a call intends, written before it executes (the `started` record): how running it again
 * would behave, and for the edit family the content hash of each file before and after. A run
 * resumed after its process died reads this to decide, per interrupted call, whether it is done,
 * safe to run again, or of unknown outcome (agent/resume.ts).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { ToolDeclaration } from "./declaration.js";

/**
 * What running an interrupted call again would do:
 * - `none`: it changes nothing (the read tools, `tree.get/list`, a person's `readOnlyHint`): run again;
 * - `files`: an edit, decided from the `files` hashes;
 * - `http`: sent again with the same Idempotency-Key;
 * - `other`: commands, the model, MCP, tree writes: never run twice without a person.
 */
export type SideEffect = "none" | "files" | "http" | "other";

/** One file an edit-family call changes: sha-256 of its bytes before and as intended after (null: absent). */
export interface FileIntent {
  /** Absolute real path. */
  path: string;
  before: string | null;
  after: string | null;
  /** false: the edit will fail as the file stands (it changes nothing), so `after` is not known. */
  planned?: false;
}

/** What an edit built-in needs to plan its change without making it. */
export interface IntentContext {
  workspace: string;
  roots?: readonly string[];
  signal: AbortSignal;
}

/** The shipped built-ins that only read (besides a person's `readOnlyHint`). */
const READ_ONLY_REFS = new Set([
  "edit.read",
  "edit.grep",
  "edit.glob",
  "edit.ls",
  "tree.get",
  "tree.list",
  "tools.search",
]);

/**
 * The side effect of a call of `decl`. `planned` says the built-in can state its file changes
 * (BuiltinTool.intent). A `readOnlyHint` counts only on a declaration a person wrote: a run
 * cannot make its own commands re-runnable by saying so.
 */
export function sideEffectOf(decl: ToolDeclaration, agentWritten: boolean, planned: boolean): SideEffect {
  const impl = decl.impl;
  if (impl.kind === "builtin" && READ_ONLY_REFS.has(impl.ref)) return "none";
  if (!agentWritten && decl.annotations?.readOnlyHint === true) return "none";
  if (impl.kind === "builtin" && planned) return "files";
  if (impl.kind === "http") return "http";
  return "other";
}

/** sha-256 (hex) of bytes, as `files` records them. */
export function bytesHash(parts: Buffer | readonly Buffer[]): string {
  const h = createHash("sha256");
  for (const p of Array.isArray(parts) ? parts : [parts as Buffer]) h.update(p);
  return h.digest("hex");
}

/** The file's content hash, or null when it does not exist (or is not a readable file). */
export async function fileHash(file: string): Promise<string | null> {
  try {
    return bytesHash(await readFile(file));
  } catch {
    return null;
  }
}

/** The state of an interrupted edit: every file at its intended hash, every file as before, or neither. */
export async function filesState(files: readonly FileIntent[]): Promise<"after" | "before" | "changed"> {
  const now = await Promise.all(files.map((f) => fileHash(f.path)));
  if (files.every((f, i) => f.planned !== false && now[i] === f.after)) return "after";
  if (files.every((f, i) => now[i] === f.before)) return "before";
  return "changed";
}

/** What a `started` record says a call intends. */
export interface CallIntent {
  sideEffect: SideEffect;
  files?: FileIntent[];
}
