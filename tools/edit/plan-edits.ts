import { ToolError } from "../errors.js";
import type { Change } from "./compact-diff.js";
import { findNearMatches } from "./near-match.js";
import { newlineStyle, normalizeNewlines, withNewlines } from "./text.js";

export interface EditSpec {
  old: string;
  new: string;
}

/** A located edit: where it sits in the original text and the 1-based line it starts on. */
export interface PlannedEdit extends Change {
  index: number;
  line: number;
}

const MAX_COUNTED = 10_000;
const MAX_LISTED_LINES = 20;

/**
 * Locates every edit in `original` (the file's text, BOM excluded, newlines as stored). Each `old` is matched
 * with CRLF read as LF, against the original (not after earlier edits); it must occur exactly once
 * (overlapping occurrences count), and no two edits may overlap. `new` takes the file's newline style.
 * `label(i)` names an edit in messages ("old" for a single replace, "edits[1].old" for multi).
 * Throws `empty_old`, `no_change`, `not_found`, `ambiguous` or `overlap`; answers the edits sorted by position.
 */
export function planEdits(
  original: string,
  edits: readonly EditSpec[],
  display: string,
  label: (i: number) => string,
): PlannedEdit[] {
  const norm = normalizeNewlines(original);
  const nl = newlineStyle(original);
  const planned: PlannedEdit[] = [];
  edits.forEach((edit, index) => {
    const what = label(index);
    const where = { path: display, index: edits.length > 1 ? index : undefined };
    if (edit.old === "") {
      throw new ToolError(
        "empty_old",
        `${what} is empty. Give the exact existing text to replace (a few unique lines); to create or fully rewrite a file use edit.write.`,
        { details: where },
      );
    }
    if (edit.old === edit.new) {
      throw new ToolError(
        "no_change",
        `${what} and its new text are identical, so nothing would change in ${display}.`,
        {
          details: where,
        },
      );
    }
    const needle = edit.old.replace(/\r\n/g, "\n");
    const found: number[] = [];
    for (
      let i = norm.text.indexOf(needle);
      i !== -1 && found.length < MAX_COUNTED;
      i = norm.text.indexOf(needle, i + 1)
    ) {
      found.push(i);
    }
    if (found.length === 0) throw notFound(norm.text, needle, what, display, where);
    if (found.length > 1) {
      const lines = linesOf(norm.text, found.slice(0, MAX_LISTED_LINES));
      const more = found.length > MAX_LISTED_LINES ? ", …" : "";
      const count = found.length >= MAX_COUNTED ? `at least ${MAX_COUNTED}` : String(found.length);
      throw new ToolError(
        "ambiguous",
        `${what} occurs ${count} times in ${display}, at lines ${lines.join(", ")}${more}. Include more surrounding lines in it so that it matches exactly one place.`,
        { details: { ...where, count: found.length, lines } },
      );
    }
    const at = found[0]!;
    const start = norm.toOriginal(at);
    const end = norm.toOriginal(at + needle.length);
    const replacement = withNewlines(edit.new, nl);
    if (original.slice(start, end) === replacement) {
      throw new ToolError(
        "no_change",
        `${what} matches, but its new text is the same once newlines are written in the file's style; nothing would change in ${display}.`,
        { details: where },
      );
    }
    planned.push({ index, start, end, replacement, line: 0 });
  });
  planned.sort((a, b) => a.start - b.start);
  for (let i = 1; i < planned.length; i++) {
    const prev = planned[i - 1]!;
    const cur = planned[i]!;
    if (cur.start < prev.end) {
      const [a, b] = prev.index < cur.index ? [prev, cur] : [cur, prev];
      throw new ToolError(
        "overlap",
        `${label(a.index)} and ${label(b.index)} overlap in ${display}. Edits are matched against the original file; merge overlapping edits into one.`,
        { details: { path: display, indexes: [a.index, b.index] } },
      );
    }
  }
  const lines = linesOf(
    original,
    planned.map((p) => p.start),
  );
  planned.forEach((p, i) => {
    p.line = lines[i]!;
  });
  return planned;
}

/** 1-based lines of sorted offsets, counted in one pass. */
function linesOf(text: string, offsets: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let pos = 0;
  for (const off of offsets) {
    for (let i = text.indexOf("\n", pos); i !== -1 && i < off; i = text.indexOf("\n", i + 1)) {
      line++;
      pos = i + 1;
    }
    out.push(line);
  }
  return out;
}

function notFound(
  text: string,
  needle: string,
  what: string,
  display: string,
  where: Record<string, unknown>,
): ToolError {
  const near = findNearMatches(text, needle);
  const parts = [`${what} was not found in ${display}.`];
  if (near.hint) parts.push(`Hint: ${near.hint}.`);
  if (near.candidates.length > 0) {
    parts.push("Closest places:");
    for (const c of near.candidates) parts.push(`line ${c.line}:\n${c.text}`);
  }
  parts.push("Read the file again with edit.read and copy the text exactly (without line numbers).");
  return new ToolError("not_found", parts.join("\n"), {
    details: { ...where, hint: near.hint, candidates: near.candidates },
  });
}
