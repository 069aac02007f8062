/**
 * How tree nodes are laid out in LevelDB.
 *
 * A node's storage key is depth-prefixed, so that the direct children of a directory are one
 * contiguous range, sorted naturally, whatever lies below them:
 *
 *   "n" + depth (2 digits) + parent directory key + sortName(name) + "\0" + ("a" | "d")
 *
 * `/a/b` → `n02/a/` + `\x02b` + `\0a`; `/a/b/` → the same ending in `d`, so a value sorts before
 * a directory of the same name. sortName puts all-digit names first, ordered by length then
 * digits (numeric order), and the rest after, by code point (UTF-8 byte order is code point order).
 * Listing 10 children is a 10-entry range scan, even under a million descendants.
 *
 * Other ranges: "h" + key + "\0" + rev — a retained previous version; "H" + key — the list of
 * retained versions of a deleted key; "r" + rev — the change log entry of one revision.
 */
import { parentOf } from "./path.js";

export const NODE = "n";
export const HIST = "h";
export const HIST_LIST = "H";
export const LOG = "r";

const DIGITS = /^[0-9]+$/;

export function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

export function padRev(rev: number): string {
  return String(rev).padStart(16, "0");
}

function sortName(name: string): string {
  return DIGITS.test(name) ? `\x01${String(name.length).padStart(4, "0")}${name}` : `\x02${name}`;
}

/** Depth of a key: the number of its segments (`/` is 0, `/a` and `/a/` are 1). */
export function depthOf(key: string): number {
  if (key === "/") return 0;
  let n = 0;
  const end = key.endsWith("/") ? key.length - 1 : key.length;
  for (let i = 0; i < end; i++) if (key.charCodeAt(i) === 47) n++;
  return n;
}

// Directory keys are few and looked up on every write below them.
const dirNodeKeys = new Map<string, string>();

/** The storage key of a node. */
export function nodeKey(key: string): string {
  if (key === "/") return `${NODE}00`;
  if (key.endsWith("/")) {
    let sk = dirNodeKeys.get(key);
    if (sk === undefined) {
      if (dirNodeKeys.size >= 4096) dirNodeKeys.clear();
      sk = buildNodeKey(key);
      dirNodeKeys.set(key, sk);
    }
    return sk;
  }
  // A write asks for its value key's storage key several times in a row (read, then write).
  if (key !== lastValueKey) {
    lastValueKey = key;
    lastValueNodeKey = buildNodeKey(key);
  }
  return lastValueNodeKey;
}
let lastValueKey = "";
let lastValueNodeKey = "";

function buildNodeKey(key: string): string {
  const dir = key.endsWith("/");
  const trimmed = dir ? key.slice(0, -1) : key;
  const slash = trimmed.lastIndexOf("/");
  const parent = trimmed.slice(0, slash + 1);
  const name = trimmed.slice(slash + 1);
  return `${NODE}${pad2(depthOf(key))}${parent}${sortName(name)}\0${dir ? "d" : "a"}`;
}

/** The storage key a child `name` (with '/' for a directory) of `dir` would have. */
export function childNodeKey(dir: string, name: string): string {
  return nodeKey(dir + name);
}

/** The range [gte, lt) holding exactly the direct children of `dir`. */
export function childrenRange(dir: string): { gte: string; lt: string } {
  const prefix = `${NODE}${pad2(depthOf(dir) + 1)}${dir}`;
  return { gte: `${prefix}\x01`, lt: `${prefix}\x03` };
}

/** The range of nodes at `depth` whose keys start with `dir` (for deltree). */
export function subtreeRangeAt(dir: string, depth: number): { gte: string; lt: string } {
  const prefix = `${NODE}${pad2(depth)}`;
  return { gte: prefix + dir, lt: prefix + upperBound(dir) };
}

/** `dir` with its last character ('/') bumped: every string starting with `dir` sorts below it. */
export function upperBound(dir: string): string {
  return `${dir.slice(0, -1)}0`;
}

/** Reads the tree key back from a node storage key. */
export function keyFromNodeKey(sk: string): string {
  if (sk === `${NODE}00`) return "/";
  const body = sk.slice(3, -2);
  const dir = sk.endsWith("d");
  // body is parent + sortName; the sortName starts at the last '/' + 1.
  const slash = body.lastIndexOf("/");
  const parent = body.slice(0, slash + 1);
  const sorted = body.slice(slash + 1);
  const name = sorted.charCodeAt(0) === 1 ? sorted.slice(5) : sorted.slice(1);
  return parent + name + (dir ? "/" : "");
}

export function histKey(key: string, rev: number): string {
  return `${HIST}${key}\0${padRev(rev)}`;
}

export function histListKey(key: string): string {
  return HIST_LIST + key;
}

export function logKey(rev: number): string {
  return LOG + padRev(rev);
}

export { parentOf };
