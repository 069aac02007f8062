import { structuredPatch } from "diff";

/** One change in the original text (offsets in the stored text, BOM excluded). */
export interface Change {
  start: number;
  end: number;
  replacement: string;
}

const CONTEXT = 3;

function lineStartBefore(text: string, offset: number, extraLines: number): { at: number; back: number } {
  let at = text.lastIndexOf("\n", offset - 1) + 1;
  let back = 0;
  while (back < extraLines && at > 0) {
    at = text.lastIndexOf("\n", at - 2) + 1;
    back++;
  }
  return { at, back };
}

function lineEndAfter(text: string, end: number, extraLines: number): number {
  // the end of the line holding the last changed character, then `extraLines` more lines
  const last = Math.max(0, end - 1);
  let at = text.charCodeAt(last) === 10 ? last : text.indexOf("\n", last);
  if (at === -1) return text.length;
  for (let n = 0; n < extraLines; n++) {
    const next = text.indexOf("\n", at + 1);
    if (next === -1) return text.length;
    at = next;
  }
  return at + 1;
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

const lf = (s: string) => s.replace(/\r\n/g, "\n");

/**
 * A unified diff of the changes (sorted, not overlapping) computed only over the lines around each change,
 * so its cost does not grow with the file. Newlines are shown as LF. `original` may be an excerpt of the file
 * that starts at the beginning of line `firstLine` and holds a few lines more than the context around the
 * changes; the hunk headers then still give the file's line numbers.
 */
export function compactDiff(
  display: string,
  original: string,
  changes: readonly Change[],
  firstLine = 1,
): string {
  type Window = { from: number; to: number; line: number; changes: Change[] };
  const windows: Window[] = [];
  let lineAtCursor = firstLine;
  let cursor = 0;
  for (const c of changes) {
    const { at, back } = lineStartBefore(original, c.start, CONTEXT);
    const to = lineEndAfter(original, c.end, CONTEXT);
    const last = windows[windows.length - 1];
    if (last && at <= last.to) {
      last.to = Math.max(last.to, to);
      last.changes.push(c);
      continue;
    }
    lineAtCursor += countNewlines(original, cursor, c.start);
    cursor = c.start;
    const startLine = lineAtCursor - back;
    windows.push({ from: at, to, line: startLine, changes: [c] });
  }
  const out = [`--- ${display}`, `+++ ${display}`];
  let delta = 0;
  for (const w of windows) {
    const before = original.slice(w.from, w.to);
    let after = "";
    let pos = w.from;
    for (const c of w.changes) {
      after += original.slice(pos, c.start) + c.replacement;
      pos = c.end;
    }
    after += original.slice(pos, w.to);
    const patch = structuredPatch("a", "b", lf(before), lf(after), "", "", { context: CONTEXT });
    for (const h of patch.hunks) {
      const oldStart = h.oldStart + w.line - 1;
      const newStart = h.newStart + w.line - 1 + delta;
      out.push(`@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`);
      for (const l of h.lines) out.push(l);
    }
    delta +=
      countNewlines(lf(after), 0, Number.POSITIVE_INFINITY) -
      countNewlines(lf(before), 0, Number.POSITIVE_INFINITY);
  }
  return out.join("\n");
}
