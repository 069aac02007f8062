import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { isIgnored, pushRules, type RuleStack, rulesAbove } from "./gitignore-rules.js";

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

/**
 * Lists the regular files below `start` (a real directory path inside `root`). `.git` folders are skipped,
 * hidden files included, symlinks not followed (so loops cannot trap the walk and nothing outside the root is
 * reached), `.gitignore` rules honoured from the root down — except that the start folder itself is searched
 * even when ignored. Depth first in name order, so the result is sorted by path.
 */
export async function walkFiles(start: string, options: WalkOptions): Promise<WalkResult> {
  const useIgnore = options.gitignore ?? true;
  let ignored = 0;
  /** The files below `dir` in path order; subfolders are read concurrently and joined in name order. */
  async function visit(dir: string, rules: RuleStack): Promise<string[]> {
    options.signal?.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return []; // unreadable or vanished folders are skipped
    }
    const here =
      useIgnore && entries.some((e) => e.name === ".gitignore") ? await pushRules(rules, dir) : rules;
    entries.sort(byName);
    const parts: (string | Promise<string[]>)[] = [];
    for (const e of entries) {
      const isDir = e.isDirectory();
      if (!isDir && !e.isFile()) continue;
      if (isDir && e.name === ".git") continue;
      const p = path.join(dir, e.name);
      if (here.length > 0 && isIgnored(here, p, isDir)) {
        ignored++;
        continue;
      }
      if (isDir) {
        const sub = visit(p, here);
        sub.catch(() => undefined); // awaited below in order; this only keeps an early rejection handled
        parts.push(sub);
      } else parts.push(p);
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
