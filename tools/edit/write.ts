import { mkdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { bytesHash, type FileIntent, type IntentContext } from "../call/intent.js";
import { defineBuiltin } from "../catalogue/declare.js";
import { ToolError } from "../errors.js";
import type { BuiltinTool } from "../types.js";
import { writeFileAtomic } from "./atomic-write.js";
import { errnoOf, fsError } from "./fs-errors.js";
import { checkNotSpecial, openRegularFile } from "./regular-file.js";
import { UTF8_BOM } from "./text.js";
import { resolveWorkspacePath } from "./workspace-path.js";

const WriteArgs = z
  .object({
    path: z
      .string()
      .describe("File to create or overwrite, relative to the workspace root (or absolute inside it)."),
    text: z.string().describe("The complete new content of the file, exactly as it should be."),
  })
  .strict();

async function hasBom(file: string, display: string): Promise<boolean> {
  const fh = await openRegularFile(file, display).then(
    (r) => r.fh,
    () => undefined,
  );
  if (!fh) return false;
  try {
    const b = Buffer.alloc(3);
    const { bytesRead } = await fh.read(b, 0, 3, 0);
    return bytesRead === 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
  } finally {
    await fh.close();
  }
}

function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.endsWith("\n") ? n : n + 1;
}

/** The file's hash now (null: absent) and with the text written (a BOM the file had kept, as execute does). */
async function writeIntent(a: z.output<typeof WriteArgs>, ctx: IntentContext): Promise<FileIntent[]> {
  const target = await resolveWorkspacePath(ctx.workspace, a.path, ctx.roots);
  const old = await readFile(target.real).catch(() => undefined);
  const keepBom =
    old?.subarray(0, 3).equals(Buffer.from(UTF8_BOM, "utf8")) === true && !a.text.startsWith(UTF8_BOM);
  const after = Buffer.from(keepBom ? UTF8_BOM + a.text : a.text, "utf8");
  return [{ path: target.real, before: old ? bytesHash(old) : null, after: bytesHash(after) }];
}

/** edit.write: create a file or replace it whole, atomically. */
export function createWriteTool(): BuiltinTool {
  return defineBuiltin({
    name: "edit.write",
    description:
      "Create a file, or replace a file's whole content, with exactly the given text. Missing parent folders are created; the write is atomic and keeps the file's mode.",
    snippet: "create a new file or rewrite a file completely",
    guidelines: [
      "Use edit.write only for new files or complete rewrites; to change part of an existing file use edit.replace.",
    ],
    schema: WriteArgs,
    sequential: true,
    intent: (a, ctx) => writeIntent(a, ctx),
    awaitsIntent: true,
    async execute(a, ctx) {
      const target = await resolveWorkspacePath(ctx.workspace, a.path, ctx.roots);
      const display = target.rel;
      return ctx.locks.run(target.real, async function writeLocked() {
        ctx.signal.throwIfAborted();
        const existing = await stat(target.real).catch((err: unknown) => {
          const errno = errnoOf(err);
          if (errno === "ENOENT") return undefined;
          if (errno === "ENOTDIR") {
            throw new ToolError(
              "not_a_directory",
              `A parent of ${display} is a file, not a folder, so ${display} cannot be created. Choose another path.`,
              { details: { path: display } },
            );
          }
          throw fsError(err, display);
        });
        if (existing?.isDirectory()) {
          throw new ToolError("is_directory", `${display} is a directory; give the path of a file.`, {
            details: { path: display },
          });
        }
        if (existing) checkNotSpecial(existing, display);
        if (!existing) {
          try {
            await mkdir(path.dirname(target.real), { recursive: true });
          } catch (err) {
            const errno = errnoOf(err);
            if (errno === "ENOTDIR" || errno === "EEXIST") {
              throw new ToolError(
                "not_a_directory",
                `A parent of ${display} is a file, not a folder, so ${display} cannot be created. Choose another path.`,
                { details: { path: display } },
              );
            }
            throw fsError(err, display);
          }
        }
        // a BOM the file had is kept (edit.read hides it, so a rewrite would otherwise drop it)
        const keepBom =
          existing !== undefined && !a.text.startsWith(UTF8_BOM) && (await hasBom(target.real, display));
        const bytes = Buffer.from(keepBom ? UTF8_BOM + a.text : a.text, "utf8");
        await writeFileAtomic(target.real, bytes, {
          display,
          signal: ctx.signal,
          ...(ctx.intentDurable ? { beforeRename: ctx.intentDurable } : {}),
        });
        const lines = countLines(a.text);
        const verb = existing ? "Replaced" : "Created";
        return {
          text: `${verb} ${display} (${bytes.byteLength} bytes, ${lines} lines).`,
          details: { path: display, created: !existing, bytes: bytes.byteLength, lines },
        };
      });
    },
  });
}
