import { z } from "zod";
import { declareBuiltin, parseArgs } from "../declare.js";
import type { BuiltinTool } from "../types.js";
import { editFile } from "./edit-file.js";

export const ReplaceArgs = z
  .object({
    path: z.string().describe("File to edit, relative to the workspace root (or absolute inside it)."),
    old: z
      .string()
      .describe(
        "Exact text to replace, copied from the file (without edit.read's line numbers). It must occur exactly once: include just enough surrounding lines to make it unique.",
      ),
    new: z.string().describe("The text that replaces old. Written literally ($ has no special meaning)."),
    dry: z.boolean().optional().describe("Only show the diff and the line of the match; write nothing."),
  })
  .strict();
export type ReplaceArgs = z.infer<typeof ReplaceArgs>;

/** edit.replace: one exact, unique replacement in an existing file. */
export function createReplaceTool(): BuiltinTool {
  const name = "edit.replace";
  return {
    ref: name,
    declaration: declareBuiltin({
      name,
      description:
        "Replace one exact, unique piece of text in an existing file. The file is left untouched on any error; newlines follow the file's style; the result shows a compact diff.",
      snippet: "replace one unique piece of text in a file",
      guidelines: [
        "Read a file with edit.read before editing it.",
        "Use edit.replace for changes to existing files; keep old as short as possible while still unique, and copy it exactly from the file.",
        "When old is reported ambiguous, add neighbouring lines to it; when not found, read the file again rather than guessing.",
      ],
      schema: ReplaceArgs,
      sequential: true,
    }),
    async execute(args, ctx) {
      const a = parseArgs(ReplaceArgs, args, name);
      return editFile(
        { path: a.path, edits: [{ old: a.old, new: a.new }], dry: a.dry ?? false, label: () => "old" },
        ctx,
      );
    },
  };
}
