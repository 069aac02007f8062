import { readFile } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import { ToolError } from "../errors.js";
import type { BuiltinTool, ToolContext, ToolOutput } from "../types.js";
import { declareBuiltin, parseArgs } from "./declare.js";
import { requiredLiteral } from "./required-literal.js";
import { relTo, resolveSearchTarget } from "./search-target.js";
import { walkFiles } from "./walker.js";

export const GrepArgs = z
  .object({
    pattern: z.string().min(1).describe("Regular expression (JavaScript syntax) to search for; see literal."),
    path: z
      .string()
      .optional()
      .describe("Folder or file to search, relative to the workspace root (default: the root)."),
    glob: z
      .string()
      .optional()
      .describe("Only search files whose path matches this glob, e.g. *.ts or src/**/*.tsx."),
    ignoreCase: z.boolean().optional().describe("Match without regard to case."),
    literal: z.boolean().optional().describe("Treat pattern as plain text, not a regular expression."),
    context: z
      .number()
      .int()
      .min(0)
      .max(20)
      .optional()
      .describe("Lines of context to show around each match."),
    limit: z.number().int().min(1).max(100_000).optional().describe("Maximum matches to show (default 100)."),
  })
  .strict();
export type GrepArgs = z.infer<typeof GrepArgs>;

const MAX_LINE_CHARS = 500;
const BATCH = 64;

function compile(a: GrepArgs): RegExp {
  let source = a.literal ? a.pattern.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") : a.pattern;
  let flags = a.ignoreCase ? "gmi" : "gm";
  // the inline (?i) many grep users write is a flag in JavaScript
  if (!a.literal && source.startsWith("(?i)")) {
    source = source.slice(4);
    if (!flags.includes("i")) flags += "i";
  }
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (err) {
      throw new ToolError(
        "invalid_pattern",
        `The pattern ${JSON.stringify(a.pattern)} is not a valid regular expression: ${(err as Error).message}. Fix it, or pass literal: true to search for the text as is.`,
        { details: { pattern: a.pattern } },
      );
    }
  }
}

function cut(line: string): string {
  const l = line.endsWith("\r") ? line.slice(0, -1) : line;
  return l.length > MAX_LINE_CHARS ? `${l.slice(0, MAX_LINE_CHARS)}…` : l;
}

/** The rows of one match: a `--` separator if needed, context before, the match, context after. */
type MatchRows = string[];

/** Searches one file's text line by line (one row per matching line), adding `context` lines around. */
function searchText(text: string, re: RegExp, shownPath: string, context: number, max: number): MatchRows[] {
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

/** edit.grep: regular-expression search over the files of a folder, .gitignore-aware. */
export function createGrepTool(): BuiltinTool {
  const name = "edit.grep";
  return {
    ref: name,
    declaration: declareBuiltin({
      name,
      description:
        "Search file contents with a regular expression. Output is path:line:text, sorted by path and line; .gitignore is honoured (a path naming an ignored folder is searched), .git and binary files are skipped.",
      snippet: "edit.grep: search file contents for a pattern",
      guidelines: [
        "Search with edit.grep or edit.glob rather than reading whole trees or running grep through shell.run.",
      ],
      schema: GrepArgs,
      enabled: false,
    }),
    async execute(args, ctx: ToolContext): Promise<ToolOutput> {
      const a = parseArgs(GrepArgs, args, name);
      const re = compile(a);
      const limit = a.limit ?? 100;
      const context = a.context ?? 0;
      const target = await resolveSearchTarget(ctx.workspace, a.path);
      const root = target.root;
      let files: string[];
      let ignored = 0;
      if (target.stats.isDirectory()) {
        const walk = await walkFiles(target.real, { root, signal: ctx.signal });
        files = walk.files;
        ignored = walk.ignored;
        if (a.glob) {
          const isMatch = picomatch(a.glob, { dot: true, basename: !a.glob.includes("/") });
          files = files.filter((f) => isMatch(path.relative(target.real, f).split(path.sep).join("/")));
        }
      } else files = [target.real];
      // a byte search for text every match must hold skips most files before any decoding
      const needle = a.ignoreCase ? undefined : a.literal ? a.pattern : requiredLiteral(a.pattern);
      const literal = needle ? Buffer.from(needle) : undefined;
      const rows: string[] = [];
      let matches = 0;
      let matchedFiles = 0;
      let binary = 0;
      let capped = false;
      for (let i = 0; i < files.length && !capped; i += BATCH) {
        ctx.signal.throwIfAborted();
        const batch = files.slice(i, i + BATCH);
        const bufs = await Promise.all(batch.map((f) => readFile(f).catch(() => undefined)));
        for (let j = 0; j < batch.length && !capped; j++) {
          const buf = bufs[j];
          if (!buf || buf.length === 0) continue;
          if (literal && buf.indexOf(literal) === -1) continue;
          if (buf.indexOf(0) !== -1) {
            binary++;
            continue;
          }
          // one match beyond the limit shows that there are more
          const groups = searchText(
            buf.toString("utf8"),
            re,
            relTo(root, batch[j]!),
            context,
            limit - matches + 1,
          );
          if (groups.length === 0) continue;
          if (matches + groups.length > limit) {
            capped = true;
            groups.length = limit - matches;
            if (groups.length === 0) break;
          }
          matchedFiles++;
          if (context > 0 && rows.length > 0) rows.push("--");
          for (const g of groups) rows.push(...g);
          matches += groups.length;
        }
      }
      const where = target.rel;
      const notes: string[] = [];
      if (capped)
        notes.push(
          `[Showing the first ${limit} matches; there are more. Narrow the pattern or path, or raise limit.]`,
        );
      if (ignored > 0) {
        notes.push(
          `[${ignored} paths ignored by .gitignore were not searched; name a path inside them to search there.]`,
        );
      }
      const details = { matches, files: matchedFiles, capped, ignored, binarySkipped: binary, path: where };
      if (matches === 0) {
        return {
          text: [`No matches for ${JSON.stringify(a.pattern)} in ${where}.`, ...notes].join("\n"),
          details,
        };
      }
      return { text: [...rows, ...notes].join("\n"), details };
    },
  };
}
