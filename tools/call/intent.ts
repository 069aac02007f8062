/**
 * What a call intends, written before it executes (the `started` record): how running it again
 * would behave, and for the edit family the content hash of each file before and after. A run
 * resumed after its process died reads this to decide, per interrupted call, whether it is done,
 * safe to run again, or of unknown outcome (agent/resume.ts).
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Tree, TreeNode } from "../../tree/types.js";
import { type TreeValue, valueToJson } from "../../tree/value.js";
import type { ToolDeclaration } from "../catalogue/declaration.js";
import { hashOf } from "../catalogue/hash.js";

/**
 * What running an interrupted call again would do:
 * - `none`: it changes nothing (the read tools, `tree.get/list`, a person's `readOnlyHint`): run again;
 * - `files`: an edit, decided from the `files` hashes;
 * - `tree`: a tree write (`tree.set`, `tree.del`), decided from the `keys` versions and hashes;
 * - `http`: sent again with the same Idempotency-Key;
 * - `other`: commands, the model, MCP: never run twice without a person.
 */
export type SideEffect = "none" | "files" | "tree" | "http" | "other";
export const SIDE_EFFECTS = ["none", "files", "tree", "http", "other"] as const;

/** One file an edit-family call changes: sha-256 of its bytes before and as intended after (null: absent). */
export interface FileIntent {
  /** Absolute real path. */
  path: string;
  before: string | null;
  after: string | null;
  /** false: the edit will fail as the file stands (it changes nothing), so `after` is not known. */
  planned?: false;
}

/**
 * One tree key a `tree.set`/`tree.del` call writes: its version before the call (0: absent), the
 * hash of its value before (null: absent) and the hash of the value the call intends (null: deleted).
 */
export interface KeyIntent {
  key: string;
  version: number;
  before: string | null;
  after: string | null;
}

/** What a tree-writing built-in needs to plan its write without making it. */
export interface KeyIntentContext {
  tree: Tree;
  vid: string;
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
 * (BuiltinTool.intent) or its tree writes (BuiltinTool.keyIntent). A `readOnlyHint` counts only on a declaration a person wrote: a run
 * cannot make its own commands re-runnable by saying so.
 */
export function sideEffectOf(
  decl: ToolDeclaration,
  agentWritten: boolean,
  planned: { files: boolean; keys: boolean },
): SideEffect {
  const impl = decl.impl;
  if (impl.kind === "builtin" && READ_ONLY_REFS.has(impl.ref)) return "none";
  if (!agentWritten && decl.annotations?.readOnlyHint === true) return "none";
  if (impl.kind === "builtin" && planned.files) return "files";
  if (impl.kind === "builtin" && planned.keys) return "tree";
  if (impl.kind === "http") return "http";
  return "other";
}

/**
 * Whether a call's `started` record needs an fsync of its own before the call runs (the store at
 * sync always). Its loss only matters if a power cut could keep the call's effect and lose the
 * record (a killed process loses neither: the record is in the OS's cache). Not for:
 * - `none`: running it again is harmless, and a call with no record runs again;
 * - `tree`: its effect is a later write to the same store, so it survives only if the record
 *   written before it does (the store's log is written in order);
 * - `http`: a call with no record runs again under the same number, so the same Idempotency-Key
 *   (a run's calls are answered one at a time: nothing of the run is appended after it meanwhile).
 * Edits (`files`: their resume needs the hashes in the record) and `other` keep it.
 */
export function intentNeedsSync(sideEffect: SideEffect): boolean {
  return sideEffect === "files" || sideEffect === "other";
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

/** The hash `keys` records of what a tree key holds: kind and JSON form of a value, or a directory; null when absent. */
export function nodeHash(node: TreeNode | undefined): string | null {
  if (!node) return null;
  return node.kind === "index" ? hashOf({ kind: "index" }) : valueHash(node.value);
}

/** The hash of a value as `keys` records it. */
export function valueHash(value: TreeValue): string {
  return hashOf({ kind: value.kind, value: valueToJson(value) });
}

/**
 * The state of an interrupted tree write, read from each key now: as before (same version, same
 * value: the write did not land), as intended (the intended value at a later version, or gone for
 * a delete), or neither (someone else wrote it since).
 */
export async function keysState(
  tree: Tree,
  keys: readonly KeyIntent[],
): Promise<"after" | "before" | "changed"> {
  const now = await Promise.all(keys.map((k) => tree.get(k.key)));
  const version = (n: TreeNode | undefined) => n?.version ?? 0;
  if (keys.every((k, i) => version(now[i]) === k.version && nodeHash(now[i]) === k.before)) return "before";
  const landed = (k: KeyIntent, n: TreeNode | undefined) =>
    k.after === null ? n === undefined && k.version > 0 : nodeHash(n) === k.after && version(n) > k.version;
  if (keys.every((k, i) => landed(k, now[i]))) return "after";
  return "changed";
}

/** What a `started` record says a call intends. */
export interface CallIntent {
  sideEffect: SideEffect;
  files?: FileIntent[];
  keys?: KeyIntent[];
  /** The record is committed with the call's tree write (intent-write.ts): its existence says the write landed. */
  withWrite?: true;
}
