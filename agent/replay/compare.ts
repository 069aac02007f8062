/**
 * How replay and diff say what differed: a short unified diff of two texts (a few hunks, lines
 * cut), tool lists compared by name, and arguments compared as the records store them.
 */
import { structuredPatch } from "diff";
import { hashOf } from "../../tools/catalogue/hash.js";
import { shorten } from "../../tools/records/records.js";

/** At most this many lines of a difference are shown. */
export const MAX_DIFF_LINES = 24;
const LINE_WIDTH = 160;

/** A unified diff of `a` → `b` (labelled), one line of context, at most `max` lines. */
export function textDiff(a: string, b: string, labels: [string, string], max = MAX_DIFF_LINES): string[] {
  const patch = structuredPatch(labels[0], labels[1], withNewline(a), withNewline(b), "", "", { context: 1 });
  const lines = [`--- ${labels[0]}`, `+++ ${labels[1]}`];
  for (const h of patch.hunks) {
    lines.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const l of h.lines) if (!l.startsWith("\\")) lines.push(cut(l));
  }
  if (lines.length <= max) return lines;
  return [...lines.slice(0, max - 1), `… ${lines.length - max + 1} more lines`];
}

/** Tools sent in one prompt and not the other, or sent with another schema: one line each. */
export function toolsDiff(
  a: Record<string, string>,
  b: Record<string, string>,
  labels: [string, string],
): string[] {
  const out: string[] = [];
  for (const name of Object.keys(a).sort()) {
    if (!(name in b)) out.push(`- ${name} (sent in ${labels[0]} only)`);
    else if (a[name] !== b[name]) out.push(`~ ${name} (its description or schema changed)`);
  }
  for (const name of Object.keys(b).sort())
    if (!(name in a)) out.push(`+ ${name} (sent in ${labels[1]} only)`);
  return out.length <= MAX_DIFF_LINES
    ? out
    : [...out.slice(0, MAX_DIFF_LINES - 1), `… ${out.length - MAX_DIFF_LINES + 1} more`];
}

/** The arguments a model's call text stands for, as a record stores them (long strings cut alike). */
export function argsOf(argsText: string): unknown {
  try {
    return shorten(argsText.trim() === "" ? {} : JSON.parse(argsText));
  } catch {
    return { "‥raw": argsText.slice(0, 2000) };
  }
}

export function sameJson(a: unknown, b: unknown): boolean {
  return hashOf(a) === hashOf(b);
}

/** A JSON value on one line, cut to a readable width. */
export function oneLine(value: unknown): string {
  return cut(typeof value === "string" ? value : (JSON.stringify(value) ?? "undefined"));
}

function cut(line: string): string {
  return line.length > LINE_WIDTH ? `${line.slice(0, LINE_WIDTH - 1)}…` : line;
}

function withNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}
