import { readlink, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineBuiltin } from "../catalogue/declare.js";
import { ToolError } from "../errors.js";
import type { BuiltinTool } from "../types.js";
import { fsError } from "./fs-errors.js";
import { listPinned } from "./pinned-list.js";
import { isDeniedPath, resolveWorkspacePath } from "./workspace-path.js";

const LsArgs = z
  .object({
    path: z
      .string()
      .optional()
      .describe("Folder to list, relative to the workspace root (default: the root)."),
  })
  .strict();

const MAX_ENTRIES = 500;

function byName(a: string, b: string): number {
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** edit.ls: a folder's entries. */
export function createLsTool(): BuiltinTool {
  return defineBuiltin({
    name: "edit.ls",
    description:
      "List a folder: entries sorted by name, folders with a trailing /, dotfiles and dangling symlinks included, at most 500.",
    snippet: "list a folder",
    guidelines: ["Use edit.ls to see a folder's entries; use edit.glob to find files deeper down."],
    schema: LsArgs,
    enabled: false,
    async execute(a, ctx) {
      const target = await resolveWorkspacePath(ctx.workspace, a.path ?? ".", ctx.roots);
      const display = target.rel;
      const st = await stat(target.real).catch((err: unknown) => {
        throw fsError(err, display);
      });
      if (!st.isDirectory()) {
        throw new ToolError(
          "not_a_directory",
          `${display} is a file, not a folder. Read it with edit.read.`,
          {
            details: { path: display },
          },
        );
      }
      // listed through the folder as opened: one swapped for a symlink since the check is refused
      const entries = await listPinned(target.real, display);
      // what the policy denies is not listed
      const visible = entries.filter((e) => !isDeniedPath(ctx.deny, path.join(target.real, e.name)));
      const rows = await Promise.all(
        visible.map(async (e) => {
          if (e.isDirectory()) return { name: e.name, row: `${e.name}/` };
          if (!e.isSymbolicLink()) return { name: e.name, row: e.name };
          const full = path.join(target.real, e.name);
          const to = await stat(full).catch(() => undefined);
          if (to?.isDirectory()) return { name: e.name, row: `${e.name}/` };
          if (to) return { name: e.name, row: e.name };
          const link = await readlink(full).catch(() => "?");
          return { name: e.name, row: `${e.name} -> ${link} (dangling symlink)` };
        }),
      );
      rows.sort((x, y) => byName(x.name, y.name));
      if (rows.length === 0) {
        return { text: `${display} is an empty folder.`, details: { path: display, count: 0 } };
      }
      const shown = rows.slice(0, MAX_ENTRIES).map((r) => r.row);
      if (rows.length > MAX_ENTRIES) {
        shown.push(
          `[Showing ${MAX_ENTRIES} of ${rows.length} entries; use edit.glob to find specific files.]`,
        );
      }
      return {
        text: shown.join("\n"),
        details: { path: display, count: rows.length, capped: rows.length > MAX_ENTRIES },
      };
    },
  });
}
