import { closeSync, readFileSync } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { openRegularSync, readRegularFile } from "./regular-file.js";

/** The rules of one `.gitignore`, anchored at the directory that holds it. */
interface RuleSet {
  /** The directory (real path) the patterns are relative to. */
  dir: string;
  ig: Ignore;
  /**
   * Patterns that match the folder the search started in (or a folder above it): naming an ignored folder
   * searches it, so these are not applied below it.
   */
  lifted: Set<unknown>;
}

/** The `.gitignore` rules in force at one directory of a walk: the root-most first, the deepest last. */
export type RuleStack = readonly RuleSet[];

function parse(text: string): Ignore {
  return ignore({ allowRelativePaths: true }).add(text);
}

function withRules(stack: RuleStack, dir: string, ig: Ignore | undefined): RuleStack {
  return ig ? [...stack, { dir, ig, lifted: new Set() }] : stack;
}

/** Adds the rules of `dir/.gitignore` (if any) to the stack. */
export async function pushRules(stack: RuleStack, dir: string): Promise<RuleStack> {
  const file = path.join(dir, ".gitignore");
  const text = await readRegularFile(file, file).then(
    (b) => b.toString("utf8"),
    () => undefined,
  );
  return withRules(stack, dir, text === undefined ? undefined : parse(text));
}

/** pushRules with a synchronous read, for walks in worker threads. */
export function pushRulesSync(stack: RuleStack, dir: string): RuleStack {
  let text: string | undefined;
  const fd = openRegularSync(path.join(dir, ".gitignore"));
  if (fd !== undefined) {
    try {
      text = readFileSync(fd, "utf8");
    } catch {
      text = undefined;
    } finally {
      closeSync(fd);
    }
  }
  return withRules(stack, dir, text === undefined ? undefined : parse(text));
}

/** The directories from the root down to start, root first. */
function dirsDown(root: string, start: string): string[] {
  const dirs: string[] = [];
  for (let d = start; ; d = path.dirname(d)) {
    dirs.unshift(d);
    if (d === root || path.dirname(d) === d) break;
  }
  return dirs;
}

/**
 * The rules from the `.gitignore` files between the workspace root and `start` (both real paths, start a
 * directory at or below root), with whatever ignores `start` itself lifted.
 */
export async function rulesAbove(root: string, start: string): Promise<RuleStack> {
  let stack: RuleStack = [];
  for (const dir of dirsDown(root, start)) stack = await pushRules(stack, dir);
  return lift(stack, start);
}

/** rulesAbove with synchronous reads. */
export function rulesAboveSync(root: string, start: string): RuleStack {
  let stack: RuleStack = [];
  for (const dir of dirsDown(root, start)) stack = pushRulesSync(stack, dir);
  return lift(stack, start);
}

function lift(stack: RuleStack, start: string): RuleStack {
  for (const set of stack) {
    const rel = path.relative(set.dir, start);
    if (rel === "") continue;
    const parts = rel.split(path.sep);
    for (let i = 1; i <= parts.length; i++) {
      const r = set.ig.test(`${parts.slice(0, i).join("/")}/`);
      if (r.ignored && r.rule) set.lifted.add(r.rule);
    }
  }
  return stack;
}

/** Is the entry at real path `p` ignored by the stack? Deeper `.gitignore` files win over shallower ones. */
export function isIgnored(stack: RuleStack, p: string, isDir: boolean): boolean {
  let ignored = false;
  for (const set of stack) {
    const rel = path.relative(set.dir, p);
    if (rel === "" || rel.startsWith("..")) continue;
    const r = set.ig.test(rel.split(path.sep).join("/") + (isDir ? "/" : ""));
    if (r.ignored && !(r.rule && set.lifted.has(r.rule))) ignored = true;
    else if (r.unignored) ignored = false;
  }
  return ignored;
}
