import { lstat } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import { defineBuiltin } from "../catalogue/declare.js";
import { ToolError } from "../errors.js";
import type { BuiltinTool } from "../types.js";
import { relTo, resolveSearchTarget } from "./search-target.js";
import { walkFiles } from "./walker.js";
import { isDeniedPath } from "./workspace-path.js";

const GlobArgs = z
  .object({
    pattern: z
      .string()
      .min(1)
      .describe(
        "Glob over paths below path, e.g. **/*.ts or src/**/test-*.js; a pattern without / matches file names.",
      ),
    path: z
      .string()
      .optional()
      .describe("Folder to search in, relative to the workspace root (default: the root)."),
  })
  .strict();

const MAX_FILES = 1000;

/**
 * The folder a pattern names before its first wildcard (`node_modules` in `node_modules/**\/*.js`),
 * when it is a real folder below `dir`: the walk starts there, so a folder `.gitignore` leaves out
 * is searched when the pattern names it, as ripgrep and fd do with a path given explicitly.
 * Anything else (no such folder, a symlink, a way out of `dir`) walks all of `dir`.
 */
async function namedFolder(dir: string, pattern: string): Promise<string> {
  if (!pattern.includes("/")) return dir;
  const { base } = picomatch.scan(pattern);
  if (base === "" || base.split("/").some((s) => s === ".." || s === "." || s === "")) return dir;
  let folder = dir;
  // each step checked without following links, as the walk itself never follows one
  for (const segment of base.split("/")) {
    folder = path.join(folder, segment);
    const stats = await lstat(folder).catch(() => undefined);
    if (!stats?.isDirectory()) return dir;
  }
  return folder;
}

/** edit.glob: files matching a glob, newest first. */
export function createGlobTool(): BuiltinTool {
  return defineBuiltin({
    name: "edit.glob",
    description:
      "Find files by path pattern (glob). .gitignore is honoured, hidden files included, .git excluded; newest first by modification time, at most 1000.",
    snippet: "find files by name pattern",
    guidelines: ["Find files with edit.glob rather than listing folders one by one."],
    schema: GlobArgs,
    enabled: false,
    async execute(a, ctx) {
      let isMatch: (p: string) => boolean;
      try {
        isMatch = picomatch(a.pattern, { dot: true, basename: !a.pattern.includes("/") });
      } catch (err) {
        throw new ToolError(
          "invalid_pattern",
          `The glob ${JSON.stringify(a.pattern)} is not valid: ${(err as Error).message}.`,
          {
            details: { pattern: a.pattern },
          },
        );
      }
      const target = await resolveSearchTarget(ctx.workspace, a.path, ctx.roots);
      if (!target.stats.isDirectory()) {
        throw new ToolError(
          "not_a_directory",
          `${target.rel} is a file; give the folder to search in as path.`,
          {
            details: { path: target.rel },
          },
        );
      }
      const start = await namedFolder(target.real, a.pattern);
      const walk = await walkFiles(start, { root: target.root, signal: ctx.signal });
      const hits = walk.files.filter(
        (f) => !isDeniedPath(ctx.deny, f) && isMatch(path.relative(target.real, f).split(path.sep).join("/")),
      );
      const stamped = await Promise.all(
        hits.map(async (f) => ({ f, t: (await lstat(f).catch(() => undefined))?.mtimeMs ?? 0 })),
      );
      stamped.sort((x, y) => y.t - x.t || (x.f < y.f ? -1 : x.f > y.f ? 1 : 0));
      const shown = stamped.slice(0, MAX_FILES).map((s) => relTo(target.root, s.f));
      const notes: string[] = [];
      if (stamped.length > MAX_FILES) {
        notes.push(
          `[Showing the ${MAX_FILES} newest of ${stamped.length} matching files; narrow the pattern or path.]`,
        );
      }
      if (walk.ignored > 0) {
        notes.push(
          `[${walk.ignored} paths ignored by .gitignore were left out; name a path inside them to look there.]`,
        );
      }
      const details = {
        path: target.rel,
        count: stamped.length,
        capped: stamped.length > MAX_FILES,
        ignored: walk.ignored,
      };
      if (shown.length === 0) {
        return {
          text: [`No files match ${JSON.stringify(a.pattern)} in ${target.rel}.`, ...notes].join("\n"),
          details,
        };
      }
      return { text: [...shown, ...notes].join("\n"), details: { ...details, files: shown } };
    },
  });
}
