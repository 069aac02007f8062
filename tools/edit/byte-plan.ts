import { compactDiff } from "./compact-diff.js";
import type { EditSpec } from "./plan-edits.js";
import { withNewlines } from "./text.js";

/** A located edit in the file's bytes: `[start, end)` becomes `bytes`; `line` is where it starts (1-based). */
export interface ByteEdit {
  start: number;
  end: number;
  bytes: Buffer;
  line: number;
}

export interface BytePlan {
  /** Sorted by position, not overlapping. */
  edits: ByteEdit[];
  diff: string;
}

/** Lines of context compactDiff shows, plus margin, so an excerpt gives the same diff as the whole text. */
const EXCERPT_LINES = 6;
const LF = 0x0a;

/**
 * The fast path of an edit for the common file without CRLF: each edit located by a byte search of the
 * (already validated) UTF-8 bytes, without decoding the file. In valid UTF-8 a byte match of a well-formed
 * needle starts and ends on character boundaries, so it finds exactly what a search of the decoded text finds.
 * Answers undefined whenever the outcome is not a plain success — CRLF in the file, an empty, unchanged,
 * missing, repeated or overlapping old, an old that is not well-formed — so the caller takes the string path
 * (`planEdits`), which owns every error and its message.
 */
export function planOnBytes(
  buf: Buffer,
  textStart: number,
  edits: readonly EditSpec[],
  display: string,
): BytePlan | undefined {
  if (buf.indexOf("\r\n", textStart) !== -1) return undefined;
  const located: Omit<ByteEdit, "line">[] = [];
  for (const edit of edits) {
    if (edit.old === "" || edit.old === edit.new) return undefined;
    const needle = edit.old.replace(/\r\n/g, "\n");
    const needleBytes = Buffer.from(needle, "utf8");
    if (needleBytes.toString("utf8") !== needle) return undefined;
    const at = buf.indexOf(needleBytes, textStart);
    if (at === -1 || buf.indexOf(needleBytes, at + 1) !== -1) return undefined;
    // a file without CRLF has LF newline style
    const replacement = withNewlines(edit.new, "\n");
    if (replacement === needle) return undefined;
    located.push({ start: at, end: at + needleBytes.length, bytes: Buffer.from(replacement, "utf8") });
  }
  located.sort((a, b) => a.start - b.start);
  for (let i = 1; i < located.length; i++) if (located[i]!.start < located[i - 1]!.end) return undefined;
  const planned: ByteEdit[] = [];
  let line = 1;
  let pos = textStart;
  for (const e of located) {
    for (let i = buf.indexOf(LF, pos); i !== -1 && i < e.start; i = buf.indexOf(LF, i + 1)) {
      line++;
      pos = i + 1;
    }
    planned.push({ ...e, line });
  }
  return { edits: planned, diff: excerptDiff(buf, textStart, planned, display) };
}

/** compactDiff over an excerpt decoded from a few lines before the first edit to a few lines after the last. */
function excerptDiff(buf: Buffer, textStart: number, edits: readonly ByteEdit[], display: string): string {
  const first = edits[0]!;
  const last = edits[edits.length - 1]!;
  // Buffer#lastIndexOf reads a negative offset from the end, hence the guard
  const lineStart = (i: number) => (i <= 0 ? 0 : buf.lastIndexOf(LF, i - 1) + 1);
  // back to the start of the edit's line, then EXCERPT_LINES lines further
  let from = lineStart(first.start);
  let firstLine = first.line;
  for (let k = 0; k < EXCERPT_LINES && from > textStart; k++) {
    from = lineStart(from - 1);
    firstLine--;
  }
  from = Math.max(from, textStart);
  let to = last.end;
  for (let k = 0; k <= EXCERPT_LINES && to < buf.length; k++) {
    const next = buf.indexOf(LF, to);
    to = next === -1 ? buf.length : next + 1;
  }
  const changes: { start: number; end: number; replacement: string }[] = [];
  let text = "";
  let pos = from;
  for (const e of edits) {
    text += buf.toString("utf8", pos, e.start);
    const start = text.length;
    text += buf.toString("utf8", e.start, e.end);
    changes.push({ start, end: text.length, replacement: e.bytes.toString("utf8") });
    pos = e.end;
  }
  text += buf.toString("utf8", pos, to);
  return compactDiff(display, text, changes, firstLine);
}
