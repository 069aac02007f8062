import type { Dirent } from "node:fs";
import path from "node:path";
import {
  isIgnored,
  pushRules,
  pushRulesSync,
  type RuleStack,
  rulesAbove,
  rulesAboveSync,
} from "./gitignore-rules.js";
import { listPinned, listPinnedSync } from "./pinned-list.js";

export interface WalkOptions {
  /** The workspace root (real path): `.gitignore` files from here down apply. */
  root: string;
  /** Honour `.gitignore` files (default true). */
  gitignore?: boolean;
  signal?: AbortSignal;
}

export interface WalkResult {
  /** Real paths of the regular files found, sorted component by component. */
  files: string[];
  /** How many files or folders `.gitignore` rules left out. */
  ignored: number;
}

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The entries of one folder to visit, in name order: folders (but not `.git`) and regular files not ignored. */
function entriesToVisit(
  dir: string,
  entries: Dirent[],
  rules: RuleStack,
  countIgnored: () => void,
): { path: string; isDir: boolean }[] {
  entries.sort(byName);
  const out: { path: string; isDir: boolean }[] = [];
  for (const e of entries) {
    const isDir = e.isDirectory();
    if (!isDir && !e.isFile()) continue;
    if (isDir && e.name === ".git") continue;
    const p = path.join(dir, e.name);
    if (rules.length > 0 && isIgnored(rules, p, isDir)) {
      countIgnored();
      continue;
    }
    out.push({ path: p, isDir });
  }
  return out;
}

const hasGitignore = (entries: Dirent[]) => entries.some((e) => e.name === ".gitignore");

/**
 * Lists the regular files below `start` (a real directory path inside `root`). `.git` folders are skipped,
 * hidden files included, symlinks not followed (so loops cannot trap the walk and nothing outside the root is
 * reached; each folder is listed as opened, so one swapped for a symlink mid-walk is skipped, see pinned-list.ts), `.gitignore` rules honoured from the root down — except that the start folder itself is searched
 * even when ignored. Depth first in name order, so the result is sorted by path.
 */
export async function walkFiles(start: string, options: WalkOptions): Promise<WalkResult> {
  const useIgnore = options.gitignore ?? true;
  let ignored = 0;
  const countIgnored = () => {
    ignored++;
  };
  /** The files below `dir` in path order; subfolders are read concurrently and joined in name order. */
  async function visit(dir: string, rules: RuleStack): Promise<string[]> {
    options.signal?.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await listPinned(dir, dir);
    } catch {
      return []; // unreadable, vanished or swapped folders are skipped
    }
    const here = useIgnore && hasGitignore(entries) ? await pushRules(rules, dir) : rules;
    const parts: (string | Promise<string[]>)[] = [];
    for (const e of entriesToVisit(dir, entries, here, countIgnored)) {
      if (e.isDir) {
        const sub = visit(e.path, here);
        sub.catch(() => undefined); // awaited below in order; this only keeps an early rejection handled
        parts.push(sub);
      } else parts.push(e.path);
    }
    const out: string[] = [];
    for (const part of parts) {
      if (typeof part === "string") out.push(part);
      else for (const f of await part) out.push(f);
    }
    return out;
  }
  const rules = useIgnore ? await rulesAbove(options.root, start) : [];
  const files = await visit(start, rules);
  return { files, ignored };
}

/**
 * walkFiles with synchronous calls, for a worker thread (no round trips through the libuv pool): hands each
 * file to `onFile` in the same order, and answers how many paths `.gitignore` left out.
 */
export function walkFilesSync(
  start: string,
  options: Omit<WalkOptions, "signal">,
  onFile: (file: string) => void,
): number {
  const useIgnore = options.gitignore ?? true;
  let ignored = 0;
  const countIgnored = () => {
    ignored++;
  };
  function visit(dir: string, rules: RuleStack): void {
    const entries = listPinnedSync(dir);
    if (entries === undefined) return;
    const here = useIgnore && hasGitignore(entries) ? pushRulesSync(rules, dir) : rules;
    for (const e of entriesToVisit(dir, entries, here, countIgnored)) {
      if (e.isDir) visit(e.path, here);
      else onFile(e.path);
    }
  }
  visit(start, useIgnore ? rulesAboveSync(options.root, start) : []);
  return ignored;
}
