import { isAscii } from "node:buffer";
import { closeSync, fstatSync, readSync } from "node:fs";
import { openRegularSync } from "./regular-file.js";

/** What every thread needs to search a file the same way; plain data, so it can be posted to a worker. */
export interface SearchSpec {
  /** RegExp source and flags (with `g` and `m`). */
  source: string;
  flags: string;
  context: number;
  /** Text every match holds; a file without it is skipped before decoding. */
  literal?: string;
  /** Most matches to collect in one file (the caller's limit plus one shows there are more). */
  max: number;
}

/** The rows of one match: a `--` separator if needed, context before, the match, context after. */
export type MatchRows = string[];

/** What searching one file gave: `binary` (it holds a NUL byte, not searched) or the match groups. */
export type FileResult = "binary" | MatchRows[];

const MAX_LINE_CHARS = 500;

function cut(line: string): string {
  const l = line.endsWith("\r") ? line.slice(0, -1) : line;
  return l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS)}…` : l;
}

/** Searches one file's text line by line (one row per matching line), adding `context` lines around. */
export function searchText(
  text: string,
  re: RegExp,
  shownPath: string,
  context: number,
  max: number,
): MatchRows[] {
  const groups: MatchRows[] = [];
  let line = 1;
  let counted = 0; // offset up to which newlines were counted into `line`
  let lastShownLine = 0; // last line number emitted (match or context)
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null && groups.length < max; m = re.exec(text)) {
    const rows: MatchRows = [];
    groups.push(rows);
    const start = text.lastIndexOf("\n", m.index - 1) + 1;
    for (let i = text.indexOf("\n", counted); i !== -1 && i < start; i = text.indexOf("\n", i + 1)) line++;
    counted = start;
    let end = text.indexOf("\n", m.index);
    if (end === -1) end = text.length;
    if (context > 0) {
      // lines before, not already shown
      const before: string[] = [];
      let s = start;
      for (let k = 1; k <= context && line - k > lastShownLine && s > 0; k++) {
        const prevStart = text.lastIndexOf("\n", s - 2) + 1;
        before.unshift(`${shownPath}-${line - k}-${cut(text.slice(prevStart, s - 1))}`);
        s = prevStart;
      }
      if (lastShownLine > 0 && line - before.length > lastShownLine + 1) rows.push("--");
      rows.push(...before);
    }
    rows.push(`${shownPath}:${line}:${cut(text.slice(start, end))}`);
    lastShownLine = line;
    if (context > 0) {
      // lines after; a later match inside them is shown as a match instead
      let e = end;
      for (let k = 1; k <= context && e + 1 < text.length; k++) {
        const nextEnd = text.indexOf("\n", e + 1);
        const stop = nextEnd === -1 ? text.length : nextEnd;
        const body = text.slice(e + 1, stop);
        re.lastIndex = 0;
        if (re.test(body)) break;
        rows.push(`${shownPath}-${line + k}-${cut(body)}`);
        lastShownLine = line + k;
        e = stop;
      }
    }
    re.lastIndex = end + 1;
    if (end >= text.length) break;
  }
  return groups;
}

/**
 * A file searcher for one spec. Checks in the order of cost: a NUL byte makes the file binary (skipped and
 * counted), then the literal prefilter on bytes, and only then the text is decoded and the RegExp run.
 */
export function createFileSearcher(spec: SearchSpec) {
  const re = new RegExp(spec.source, spec.flags);
  const literal = spec.literal ? Buffer.from(spec.literal, "utf8") : undefined;
  /** Searches file bytes already read; answers undefined when the file holds nothing to show. */
  function searchBuffer(buf: Buffer, shownPath: string): FileResult | undefined {
    if (buf.length === 0) return undefined;
    if (buf.indexOf(0) !== -1) return "binary";
    if (literal && buf.indexOf(literal) === -1) return undefined;
    // ASCII decodes the same either way, and latin1 decoding is a plain copy
    const text = buf.toString(isAscii(buf) ? "latin1" : "utf8");
    const groups = searchText(text, re, shownPath, spec.context, spec.max);
    return groups.length > 0 ? groups : undefined;
  }
  // one reusable buffer, grown to the largest file read: most files fit its first 64 KB, and a NUL there
  // settles "binary" without reading further
  const HEAD = 64 * 1024;
  let scratch = Buffer.allocUnsafe(HEAD);
  /**
   * Reads and searches one file with synchronous calls (for worker threads, where blocking is the point):
   * open, one read, close for a file that fits the head. Unreadable files answer undefined.
   */
  function searchFileSync(file: string, shownPath: string): FileResult | undefined {
    // non-blocking, and only a regular file: a FIFO put in a folder never holds the thread
    const fd = openRegularSync(file);
    if (fd === undefined) return undefined;
    try {
      let len = readSync(fd, scratch, 0, HEAD, 0);
      if (len === HEAD) {
        if (scratch.subarray(0, HEAD).indexOf(0) !== -1) return "binary";
        const size = fstatSync(fd).size;
        for (;;) {
          if (len === scratch.length) {
            // one byte beyond the size shows the end; more if the file grew while being read
            const bigger = Buffer.allocUnsafe(Math.max(size + 1, scratch.length * 2));
            scratch.copy(bigger, 0, 0, len);
            scratch = bigger;
          }
          const got = readSync(fd, scratch, len, scratch.length - len, len);
          if (got === 0) break;
          len += got;
        }
      }
      return searchBuffer(scratch.subarray(0, len), shownPath);
    } catch {
      return undefined;
    } finally {
      closeSync(fd);
    }
  }
  return { searchBuffer, searchFileSync };
}
