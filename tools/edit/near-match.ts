/** What a failed match can tell the model: a hint about the kind of difference and the closest places. */
export interface NearMatches {
  hint?: string;
  candidates: { line: number; text: string }[];
}

const MAX_FUZZY_LINES = 200_000;
const SHOW_LINES = 8;
const SHOW_CHARS = 200;

const LINE_NUMBER_PREFIX = /^\s*\d+(\t|:\s?|\s+│\s?)/;
const QUOTES = /[‘’‛′`'“”„″"«»]/g;

type LineTransform = (line: string) => string;

const TRANSFORMS: { hint: string; t: LineTransform }[] = [
  { hint: "tabs versus spaces", t: (l) => l.replace(/\t/g, "    ") },
  { hint: "whitespace (indentation, spacing or trailing spaces)", t: (l) => l.trim().replace(/\s+/g, " ") },
  { hint: "quote characters (straight, curly or backticks)", t: (l) => l.replace(QUOTES, '"') },
  {
    hint: "whitespace and quote characters",
    t: (l) => l.trim().replace(/\s+/g, " ").replace(QUOTES, '"'),
  },
];

function excerpt(lines: string[], from: number, count: number): string {
  const shown = lines.slice(from, from + Math.min(count, SHOW_LINES)).map((l) => {
    const s = l.endsWith("\r") ? l.slice(0, -1) : l;
    return s.length > SHOW_CHARS ? `${s.slice(0, SHOW_CHARS)}…` : s;
  });
  if (count > SHOW_LINES) shown.push(`… (${count - SHOW_LINES} more lines)`);
  return shown.join("\n");
}

/** Start lines (0-based) where `needle` lines occur in `hay` lines, both already transformed. */
function findLines(hay: string[], needle: string[], max: number): number[] {
  const joined = hay.join("\n");
  const target = needle.join("\n");
  if (target.trim() === "") return [];
  const found: number[] = [];
  let line = 0;
  let lastPos = 0;
  for (let i = joined.indexOf(target); i !== -1 && found.length < max; i = joined.indexOf(target, i + 1)) {
    for (let j = joined.indexOf("\n", lastPos); j !== -1 && j < i; j = joined.indexOf("\n", j + 1)) {
      line++;
      lastPos = j + 1;
    }
    // a transformed match that starts mid-line still points at its line
    found.push(line);
  }
  return found;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Dice coefficient of two strings' bigrams: 1 for equal, 0 for nothing shared. */
function similarity(a: Map<string, number>, aLen: number, b: string): number {
  if (aLen < 2 || b.length < 2) return 0;
  let shared = 0;
  const seen = new Map<string, number>();
  for (let i = 0; i < b.length - 1; i++) {
    const g = b.slice(i, i + 2);
    const used = seen.get(g) ?? 0;
    if (used < (a.get(g) ?? 0)) {
      shared++;
      seen.set(g, used + 1);
    }
  }
  return (2 * shared) / (aLen - 1 + (b.length - 1));
}

/**
 * Looks for where `old` (LF newlines) nearly occurs in `text` (LF newlines): first exact matches after
 * dropping `cat -n` line numbers, then after ignoring whitespace or quote differences, then by similarity of
 * its longest line. Answers at most three candidates with 1-based line numbers.
 */
export function findNearMatches(text: string, old: string): NearMatches {
  const lines = text.split("\n");
  const oldLines = old.split("\n");
  const count = oldLines.length;
  const numbered = oldLines.filter((l) => l.trim() !== "");
  if (numbered.length > 0 && numbered.every((l) => LINE_NUMBER_PREFIX.test(l))) {
    const stripped = oldLines.map((l) => l.replace(LINE_NUMBER_PREFIX, ""));
    const at = findLines(lines, stripped, 3);
    if (at.length > 0) {
      return {
        hint: "old includes the line numbers of edit.read output; leave out the number and TAB at the start of each line",
        candidates: at.map((l) => ({ line: l + 1, text: excerpt(lines, l, count) })),
      };
    }
  }
  for (const { hint, t } of TRANSFORMS) {
    const at = findLines(lines.map(t), oldLines.map(t), 3);
    if (at.length > 0) {
      return {
        hint: `the file has this text, but it differs from old in ${hint}; copy the exact text from the file`,
        candidates: at.map((l) => ({ line: l + 1, text: excerpt(lines, l, count) })),
      };
    }
  }
  if (lines.length > MAX_FUZZY_LINES) return { candidates: [] };
  let anchor = 0;
  for (let i = 1; i < oldLines.length; i++) {
    if (oldLines[i]!.trim().length > oldLines[anchor]!.trim().length) anchor = i;
  }
  const a = oldLines[anchor]!.trim();
  const grams = bigrams(a);
  const scored: { line: number; score: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const b = lines[i]!.trim();
    if (b.length < a.length / 2 || b.length > a.length * 2 + 2) continue;
    const score = similarity(grams, a.length, b);
    if (score >= 0.5) scored.push({ line: i, score });
  }
  scored.sort((x, y) => y.score - x.score || x.line - y.line);
  return {
    candidates: scored.slice(0, 3).map(({ line }) => {
      const from = Math.max(0, line - anchor);
      return { line: from + 1, text: excerpt(lines, from, count) };
    }),
  };
}
