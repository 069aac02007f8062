import path from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import { defineBuiltin } from "../catalogue/declare.js";
import { ToolError } from "../errors.js";
import type { BuiltinTool } from "../types.js";
import {
  createGrepPool,
  defaultGrepThreads,
  type GrepPool,
  grepInWorkers,
  grepWorkerUrl,
} from "./grep-pool.js";
import { createFileSearcher, type FileResult, type SearchSpec } from "./grep-search.js";
import { readRegularFile } from "./regular-file.js";
import { requiredLiteral } from "./required-literal.js";
import { relTo, resolveSearchTarget } from "./search-target.js";
import { walkFiles } from "./walker.js";
import { isDeniedPath } from "./workspace-path.js";

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

const BATCH = 64;

interface CompiledPattern {
  source: string;
  flags: string;
}

function compile(a: GrepArgs): CompiledPattern {
  let source = a.literal ? a.pattern.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") : a.pattern;
  let flags = a.ignoreCase ? "gmi" : "gm";
  // the inline (?i) many grep users write is a flag in JavaScript
  if (!a.literal && source.startsWith("(?i)")) {
    source = source.slice(4);
    if (!flags.includes("i")) flags += "i";
  }
  try {
    new RegExp(source, `${flags}u`);
    return { source, flags: `${flags}u` };
  } catch {
    try {
      new RegExp(source, flags);
      return { source, flags };
    } catch (err) {
      throw new ToolError(
        "invalid_pattern",
        `The pattern ${JSON.stringify(a.pattern)} is not a valid regular expression: ${(err as Error).message}. Fix it, or pass literal: true to search for the text as is.`,
        { details: { pattern: a.pattern } },
      );
    }
  }
}

export interface GrepToolOptions {
  /**
   * Worker threads for searching a folder (one of them walks it first), kept idle between searches for a
   * while; 0 searches in the calling thread.
   * Without a compiled worker script (running the TypeScript sources with no dist/) grep searches in-thread.
   */
  threads?: number;
}

/** The glob filter on walked files (paths relative to the searched folder); everything without a glob. */
function globFilter(glob: string | undefined, base: string): (file: string) => boolean {
  if (!glob) return () => true;
  const isMatch = picomatch(glob, { dot: true, basename: !glob.includes("/") });
  return (f) => isMatch(path.relative(base, f).split(path.sep).join("/"));
}

/** edit.grep: regular-expression search over the files of a folder, .gitignore-aware. */
export function createGrepTool({ threads = defaultGrepThreads() }: GrepToolOptions = {}): BuiltinTool {
  // made on the first folder search, kept for the tool's life (its idle workers end on their own)
  let pool: GrepPool | null | undefined;
  function poolOf(): GrepPool | undefined {
    if (pool === undefined) {
      const url = threads > 0 ? grepWorkerUrl() : undefined;
      pool = url ? createGrepPool(url) : null;
    }
    return pool ?? undefined;
  }
  return defineBuiltin({
    name: "edit.grep",
    description:
      "Search file contents with a regular expression. Output is path:line:text, sorted by path and line; .gitignore is honoured (a path naming an ignored folder is searched), .git and binary files are skipped.",
    snippet: "search file contents for a pattern",
    guidelines: [
      "Search with edit.grep or edit.glob rather than reading whole trees or running grep through shell.run.",
    ],
    schema: GrepArgs,
    enabled: false,
    async execute(a, ctx) {
      const pattern = compile(a);
      const limit = a.limit ?? 100;
      const context = a.context ?? 0;
      const target = await resolveSearchTarget(ctx.workspace, a.path, ctx.roots);
      const root = target.root;
      // a byte search for text every match must hold skips most files before any decoding
      const literal = a.ignoreCase ? undefined : a.literal ? a.pattern : requiredLiteral(a.pattern);
      // one match beyond the limit shows that there are more
      const spec: SearchSpec = {
        source: pattern.source,
        flags: pattern.flags,
        context,
        literal,
        max: limit + 1,
      };
      const rows: string[] = [];
      let matches = 0;
      let matchedFiles = 0;
      let binary = 0;
      let capped = false;
      /** Adds one file's result, in path order; answers false once the limit is passed. */
      function consume(result: FileResult | null): boolean {
        if (result === null) return true;
        if (result === "binary") {
          binary++;
          return true;
        }
        const groups = result;
        if (matches + groups.length > limit) {
          capped = true;
          groups.length = limit - matches;
          if (groups.length === 0) return false;
        }
        matchedFiles++;
        if (context > 0 && rows.length > 0) rows.push("--");
        for (const g of groups) rows.push(...g);
        matches += groups.length;
        return !capped;
      }
      let ignored = 0;
      const glob = globFilter(a.glob, target.real);
      // what the policy denies is never searched, whatever folder names it
      const keep = (f: string) => !isDeniedPath(ctx.deny, f) && glob(f);
      const dir = target.stats.isDirectory();
      // a regular expression can run for ever (`(a+)+$`): it runs in a worker, which the call's
      // timeout or abort terminates, for one file as for a folder
      const workers = poolOf();
      if (workers) {
        const walk = await grepInWorkers({
          pool: workers,
          threads: dir ? threads : 1,
          spec,
          start: target.real,
          ...(dir ? {} : { files: [target.real] }),
          root,
          keep: dir ? keep : () => true,
          shown: (f) => relTo(root, f),
          signal: ctx.signal,
          consume,
        });
        ignored = walk.ignored;
      } else {
        let files = [target.real];
        if (dir) {
          const walk = await walkFiles(target.real, { root, signal: ctx.signal });
          files = walk.files.filter(keep);
          ignored = walk.ignored;
        }
        const searcher = createFileSearcher(spec);
        for (let i = 0; i < files.length && !capped; i += BATCH) {
          ctx.signal.throwIfAborted();
          const batch = files.slice(i, i + BATCH);
          const bufs = await Promise.all(batch.map((f) => readRegularFile(f, f).catch(() => undefined)));
          for (let j = 0; j < batch.length; j++) {
            const buf = bufs[j];
            const result = buf ? searcher.searchBuffer(buf, relTo(root, batch[j]!)) : undefined;
            if (!consume(result ?? null)) break;
          }
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
      const details = {
        matches,
        files: matchedFiles,
        capped,
        ignored,
        binarySkipped: binary,
        path: where,
        threads: workers ? threads : 0,
      };
      if (matches === 0) {
        return {
          text: [`No matches for ${JSON.stringify(a.pattern)} in ${where}.`, ...notes].join("\n"),
          details,
        };
      }
      return { text: [...rows, ...notes].join("\n"), details };
    },
  });
}
