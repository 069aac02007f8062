import { lstat, mkdir, rename } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { type FileIntent, fileHash, type IntentContext } from "../call/intent.js";
import { defineBuiltin } from "../catalogue/declare.js";
import { suggest, ToolError } from "../errors.js";
import type { BuiltinTool } from "../types.js";
import { errnoOf, fsError } from "./fs-errors.js";
import { pinDir } from "./pinned-dir.js";
import { checkNotSpecial } from "./regular-file.js";
import { resolveWorkspaceEntry } from "./workspace-path.js";

const RenameArgs = z
  .object({
    from: z.string().describe("Existing file or folder, relative to the workspace root."),
    to: z.string().describe("New path, relative to the workspace root; missing parent folders are created."),
    overwrite: z.boolean().optional().describe("Replace an existing file at to (never a folder)."),
  })
  .strict();

async function lstatOrUndefined(p: string, display: string) {
  return lstat(p).catch((err: unknown) => {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw fsError(err, display);
  });
}

/** A file's move as two changes (the source gone, the target holding its bytes); a folder's cannot be stated. */
async function renameIntent(
  a: z.output<typeof RenameArgs>,
  ctx: IntentContext,
): Promise<FileIntent[] | undefined> {
  const from = await resolveWorkspaceEntry(ctx.workspace, a.from, ctx.roots);
  const to = await resolveWorkspaceEntry(ctx.workspace, a.to, ctx.roots);
  const src = await lstat(from.real).catch(() => undefined);
  if (src?.isDirectory()) return undefined;
  const moved = await fileHash(from.real);
  const target = await fileHash(to.real);
  // a move that will be refused (no source, an existing target without overwrite) changes nothing
  if (moved === null || (target !== null && !a.overwrite) || from.real === to.real)
    return [{ path: from.real, before: moved, after: null, planned: false }];
  return [
    { path: from.real, before: moved, after: null },
    { path: to.real, before: target, after: moved },
  ];
}

/** edit.rename: move a file or folder inside the workspace, atomically. */
export function createRenameTool(): BuiltinTool {
  return defineBuiltin({
    name: "edit.rename",
    description:
      "Rename or move a file or folder inside the workspace in one atomic step. Parent folders of the new path are created; an existing file is replaced only with overwrite.",
    snippet: "move or rename a file or folder",
    guidelines: ["Move files with edit.rename instead of writing a copy and deleting the original."],
    schema: RenameArgs,
    sequential: true,
    enabled: false,
    intent: renameIntent,
    awaitsIntent: true,
    async execute(a, ctx) {
      const from = await resolveWorkspaceEntry(ctx.workspace, a.from, ctx.roots);
      const to = await resolveWorkspaceEntry(ctx.workspace, a.to, ctx.roots);
      if (from.real === to.real) {
        throw new ToolError("no_change", `from and to both name ${from.rel}; nothing to rename.`, {
          details: { from: from.rel, to: to.rel },
        });
      }
      const [first, second] = [from.real, to.real].sort();
      return ctx.locks.run(first!, () =>
        ctx.locks.run(second!, async function renameLocked() {
          ctx.signal.throwIfAborted();
          const src = await lstatOrUndefined(from.real, from.rel);
          if (!src) {
            throw new ToolError("file_not_found", `${from.rel} does not exist.`, {
              details: { path: from.rel },
              explain: (where) =>
                `${from.rel} does not exist in the workspace ${where.workspace} (paths are relative to it).` +
                suggest(where, ["edit.ls", "edit.glob"], "Check the path with {tools}."),
            });
          }
          checkNotSpecial(src, from.rel);
          const dst = await lstatOrUndefined(to.real, to.rel);
          if (dst) checkNotSpecial(dst, to.rel);
          if (dst?.isDirectory()) {
            throw new ToolError(
              "is_directory",
              `${to.rel} is an existing folder; give the full new path instead (e.g. ${to.rel}/${path.basename(from.real)}).`,
              {
                details: { path: to.rel },
              },
            );
          }
          if (dst && !a.overwrite) {
            throw new ToolError(
              "already_exists",
              `${to.rel} already exists. Pass overwrite: true to replace it, or choose another name.`,
              { details: { path: to.rel } },
            );
          }
          if (dst && src.isDirectory()) {
            throw new ToolError(
              "not_a_directory",
              `${from.rel} is a folder and ${to.rel} is a file; a folder cannot replace a file.`,
              {
                details: { from: from.rel, to: to.rel },
              },
            );
          }
          if (src.isDirectory() && (to.real + path.sep).startsWith(from.real + path.sep)) {
            throw new ToolError(
              "invalid_path",
              `${to.rel} is inside ${from.rel}; a folder cannot move into itself.`,
              {
                details: { from: from.rel, to: to.rel },
              },
            );
          }
          try {
            await mkdir(path.dirname(to.real), { recursive: true });
          } catch (err) {
            const errno = errnoOf(err);
            if (errno === "ENOTDIR" || errno === "EEXIST") {
              throw new ToolError(
                "not_a_directory",
                `A parent of ${to.rel} is a file, not a folder. Choose another path.`,
                {
                  details: { path: to.rel },
                },
              );
            }
            throw fsError(err, to.rel);
          }
          // the move is the effect: not before the call's started record is stored
          await ctx.intentDurable?.();
          // both folders as opened and checked: one swapped for a symlink meanwhile cannot redirect the move
          const fromDir = await pinDir(path.dirname(from.real), from.rel);
          try {
            const toDir = await pinDir(path.dirname(to.real), to.rel);
            try {
              await fromDir.check();
              await toDir.check();
              await rename(fromDir.join(path.basename(from.real)), toDir.join(path.basename(to.real)));
            } finally {
              await toDir.close();
            }
          } catch (err) {
            throw fsError(err, `${from.rel} -> ${to.rel}`);
          } finally {
            await fromDir.close();
          }
          return {
            text: `Renamed ${from.rel} to ${to.rel}${dst ? " (replacing the old file)" : ""}.`,
            details: { from: from.rel, to: to.rel, replaced: dst !== undefined },
          };
        }),
      );
    },
  });
}
