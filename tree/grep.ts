/**
 * Search in a subtree's keys and values (`kvspace grep`, `GET /v1/grep/<prefix/>`), over any Tree:
 * the walk lists directory by directory, a page at a time, in key order (a directory after the
 * value of the same name), skipping system entries (`‥…`) as listings do.
 *
 * Bounded three ways — matches (`limit`), bytes of values read (`maxBytes`) and time (`maxMs`) —
 * and it answers where it stopped (`next`: pass it back as `after` to go on; a key's matches are
 * never split between two answers, but a value with more matching lines than `limit` shows only
 * its first `limit`). It never holds the
 * event loop: it yields between pages, and a regular expression runs under a time limit (`vm`'s
 * timeout interrupts a pattern that backtracks), so a search over a million values or a hostile
 * pattern costs other requests at most a few milliseconds at a time.
 */
import { createContext, Script } from "node:vm";
import { TreeError } from "./errors.js";
import { parseDirKey } from "./path.js";
import type { ListChild, ListResult, Tree } from "./types.js";
import type { TreeValue } from "./value.js";

export const GREP_DEFAULT_LIMIT = 100;
export const GREP_MAX_LIMIT = 1000;
/** Default bytes of keys and values one search reads (64 MiB). */
export const GREP_DEFAULT_BYTES = 64 * 1024 * 1024;
/** Default time one search runs, ms. */
export const GREP_DEFAULT_MS = 5000;
/** Longest pattern accepted, characters. */
export const GREP_MAX_PATTERN = 1000;
/** Characters of a matching line shown in a match's preview. */
const PREVIEW = 160;
/** Children listed per page (the matching of a page runs in one go). */
const PAGE = 200;
/** Longest one call of a regular expression runs (then once more for 8 times as long), ms. */
const REGEX_SLICE_MS = 250;
/** Characters of lines one call of a regular expression tests. */
const REGEX_CHUNK = 1024 * 1024;
/** Longest the event loop is held between yields, ms. */
const SLICE_MS = 10;

export interface GrepOptions {
  pattern: string;
  /** `pattern` is a JavaScript regular expression (default: plain text). */
  regex?: boolean;
  ignoreCase?: boolean;
  /** Match keys (default true). */
  keys?: boolean;
  /** Match values (default true). */
  values?: boolean;
  /** Most matches answered (default 100, at most 1000). */
  limit?: number;
  /** Go on after this key (a `next` answered before). */
  after?: string;
  /** Most bytes of keys and values read (default 64 MiB). */
  maxBytes?: number;
  /** Most time spent, ms (default 5000). */
  maxMs?: number;
  signal?: AbortSignal;
  /** The value as this search may read it (byteseek masks the secret fields of MCP registry entries). */
  view?: (key: string, value: TreeValue) => TreeValue;
}

/** A match: a key (no `line`), or a line of a value (1-based), with the text around the match. */
export interface GrepMatch {
  key: string;
  line?: number;
  preview: string;
}

export interface GrepResult {
  matches: GrepMatch[];
  /** Where the search stopped: pass as `after` to go on. Absent when it searched everything. */
  next?: string;
  /** True when a budget (bytes or time), not the match limit, stopped it. */
  truncated?: boolean;
  /** Keys and bytes read. */
  scanned: { keys: number; bytes: number };
}

/** A value as a search reads it: text as it is, JSON on one line, anything else as written. */
export function searchText(value: TreeValue): string {
  if (value.kind === "char/utf8") return value.value;
  if (value.kind === "json") return JSON.stringify(value.value);
  return String(value.value);
}

type Tester = (lines: string[]) => number[];

/** The matcher of a search: plain text with `includes`, a regular expression under a time limit. */
function matcher(o: GrepOptions): { test: Tester; find: (s: string) => number } {
  if (o.pattern.length === 0 || o.pattern.length > GREP_MAX_PATTERN)
    throw new TreeError(
      "TREE_INVALID_VALUE",
      `a search pattern has 1 to ${GREP_MAX_PATTERN} characters, got ${o.pattern.length}`,
    );
  if (!o.regex) {
    const needle = o.ignoreCase ? o.pattern.toLowerCase() : o.pattern;
    const find = (s: string) => (o.ignoreCase ? s.toLowerCase() : s).indexOf(needle);
    return {
      find,
      test: (lines) => {
        const hits: number[] = [];
        for (let i = 0; i < lines.length; i++) if (find(lines[i]!) >= 0) hits.push(i);
        return hits;
      },
    };
  }
  let re: RegExp;
  try {
    re = new RegExp(o.pattern, o.ignoreCase ? "i" : "");
  } catch (err) {
    throw new TreeError(
      "TREE_INVALID_VALUE",
      `the pattern is not a valid regular expression (${(err as Error).message}); search for plain text without --regex`,
    );
  }
  const sandbox = createContext({ re, lines: [] as string[], hits: [] as number[], at: -1, s: "" });
  const testAll = new Script(
    "hits = []; for (let i = 0; i < lines.length; i++) if (re.test(lines[i])) hits.push(i);",
  );
  const searchOne = new Script("at = s.search(re);");
  // The timeout is wall time: on a loaded machine a call can be descheduled past the first, so one
  // that runs out is tried once more with a longer one before the pattern is blamed.
  const run = (script: Script) => {
    for (const timeout of [REGEX_SLICE_MS, REGEX_SLICE_MS * 8]) {
      try {
        script.runInContext(sandbox, { timeout });
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== "ERR_SCRIPT_EXECUTION_TIMEOUT") throw err;
      }
    }
    throw new TreeError(
      "TREE_INVALID_VALUE",
      "the regular expression took too long on these values (it backtracks): simplify it, or search for plain text",
    );
  };
  return {
    // a few lines at a time (at most REGEX_CHUNK characters): a pattern gets REGEX_SLICE_MS a call
    test(lines) {
      const hits: number[] = [];
      for (let from = 0; from < lines.length; ) {
        let to = from;
        for (
          let size = 0;
          to < lines.length && (to === from || size + lines[to]!.length <= REGEX_CHUNK);
          to++
        )
          size += lines[to]!.length;
        sandbox.lines = lines.slice(from, to);
        run(testAll);
        for (const i of sandbox.hits as number[]) hits.push(from + i);
        from = to;
      }
      return hits;
    },
    find(s) {
      sandbox.s = s;
      run(searchOne);
      return sandbox.at as number;
    },
  };
}

/** The text shown for a match at `at` in `line`: the line, cut around the match. */
function preview(line: string, at: number): string {
  if (line.length <= PREVIEW) return line;
  const start = Math.max(0, Math.min(at - 40, line.length - PREVIEW));
  return `${start > 0 ? "…" : ""}${line.slice(start, start + PREVIEW)}${start + PREVIEW < line.length ? "…" : ""}`;
}

/** Searches the subtree at `prefix` (a directory) for `options.pattern`. */
export async function grep(tree: Tree, prefix: string, o: GrepOptions): Promise<GrepResult> {
  parseDirKey(prefix);
  const limit = o.limit ?? GREP_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > GREP_MAX_LIMIT)
    throw new TreeError("TREE_INVALID_VALUE", `limit is 1 to ${GREP_MAX_LIMIT}, got ${String(o.limit)}`);
  if (o.after !== undefined && (!o.after.startsWith(prefix) || o.after === prefix))
    throw new TreeError(
      "TREE_INVALID_VALUE",
      `after must be a key below ${prefix} (a next answered before)`,
      {
        after: o.after,
      },
    );
  const start = Date.now();
  const maxMs = o.maxMs ?? GREP_DEFAULT_MS;
  const maxBytes = o.maxBytes ?? GREP_DEFAULT_BYTES;
  const left = () => maxMs - (Date.now() - start);
  const m = matcher(o);
  const keys = o.keys ?? true;
  const values = o.values ?? true;
  const matches: GrepMatch[] = [];
  const scanned = { keys: 0, bytes: 0 };
  let last: string | undefined;
  let stop: "limit" | "budget" | undefined;
  let yielded = Date.now();

  async function page(dir: string, after: string | undefined): Promise<ListResult | undefined> {
    try {
      return await tree.list(dir, { limit: PAGE, values, ...(after ? { after } : {}) });
    } catch (err) {
      if ((err as { code?: string }).code === "TREE_NOT_FOUND") return undefined; // gone meanwhile
      throw err;
    }
  }

  /** What a child of a page holds for the search: its key's match, its value's lines and those that match. */
  interface Seen {
    keyAt: number;
    lines: string[];
    hits: number[];
    bytes: number;
    /** Where its lines start in the page's lines. */
    offset: number;
  }

  /** Matches a whole page at once (one call of the matcher for its keys, one for its values' lines). */
  function scan(dir: string, children: ListChild[]): Seen[] {
    const seen: Seen[] = children.map((c) => ({
      keyAt: -1,
      lines: [],
      hits: [],
      bytes: dir.length + c.name.length,
      offset: 0,
    }));
    if (keys) {
      const names = children.map((c) => dir + c.name);
      for (const i of m.test(names)) seen[i]!.keyAt = m.find(names[i]!);
    }
    if (values) {
      const flat: string[] = [];
      const owner: number[] = [];
      children.forEach((c, i) => {
        if (c.kind === "index" || c.value === undefined) return;
        const text = searchText(o.view ? o.view(dir + c.name, c.value) : c.value);
        const s = seen[i]!;
        s.bytes += text.length;
        s.lines = text.split("\n");
        s.offset = flat.length;
        for (let l = 0; l < s.lines.length; l++) {
          flat.push(s.lines[l]!);
          owner.push(i);
        }
      });
      for (const at of m.test(flat)) {
        const s = seen[owner[at]!]!;
        s.hits.push(at - s.offset);
      }
    }
    return seen;
  }

  /**
   * Takes one child's matches; answers false when the search must stop. A child's matches are
   * answered together: one that would go over the limit is left for the next call (`next` is the
   * child before it), unless it alone has more than the limit (then its first `limit` are answered).
   */
  function take(key: string, s: Seen): boolean {
    scanned.keys++;
    scanned.bytes += s.bytes;
    const found: GrepMatch[] = [];
    if (s.keyAt >= 0) found.push({ key, preview: preview(key, s.keyAt) });
    for (const i of s.hits) {
      if (found.length >= limit) break;
      const text = s.lines[i]!;
      found.push({ key, line: i + 1, preview: preview(text, m.find(text)) });
    }
    if (matches.length > 0 && matches.length + found.length > limit) {
      stop = "limit";
      return false;
    }
    matches.push(...found);
    last = key;
    if (matches.length >= limit) stop = "limit";
    else if (scanned.bytes >= maxBytes || left() <= 0 || o.signal?.aborted) stop = "budget";
    return stop === undefined;
  }

  /** Gives the event loop a turn when the search has held it for SLICE_MS. */
  async function breathe(): Promise<void> {
    if (Date.now() - yielded < SLICE_MS) return;
    await new Promise<void>((r) => setImmediate(r));
    yielded = Date.now();
  }

  /** Walks `dir`; `path` (names below it) says where a resumed search goes on. */
  async function walk(dir: string, path: string[]): Promise<void> {
    let after: string | undefined;
    if (path.length > 0) {
      after = path[0]!;
      if (after.endsWith("/")) {
        await walk(dir + after, path.slice(1));
        if (stop) return;
      }
    }
    for (;;) {
      const res = await page(dir, after);
      if (!res) return;
      const seen = scan(dir, res.children);
      await breathe();
      for (let i = 0; i < res.children.length; i++) {
        const child = res.children[i]!;
        const key = dir + child.name;
        if (!take(key, seen[i]!)) return;
        if (child.name.endsWith("/")) {
          await walk(key, []);
          if (stop) return;
        }
      }
      await breathe();
      if (!res.next) return;
      after = res.next;
    }
  }

  await walk(prefix, o.after ? splitPath(o.after.slice(prefix.length)) : []);
  const out: GrepResult = { matches, scanned };
  if (stop && last !== undefined) out.next = last;
  if (stop === "budget") out.truncated = true;
  return out;
}

/** `a/b/c` → `["a/", "b/", "c"]`; `a/b/` → `["a/", "b/"]`. */
function splitPath(rel: string): string[] {
  const parts = rel.split("/");
  const out = parts.slice(0, -1).map((p) => `${p}/`);
  const tail = parts[parts.length - 1]!;
  if (tail !== "") out.push(tail);
  return out;
}
