import { z } from "zod";
import { defineBuiltin } from "../catalogue/declare.js";
import type { BuiltinTool } from "../types.js";
import { editFile, planFileChange } from "./edit-file.js";

const Edit = z
  .object({
    old: z.string().describe("Exact text, unique in the original file"),
    new: z.string().describe("Its replacement"),
  })
  .strict();

/**
 * One replacement (old, new) or several (edits): one tool where a model would otherwise choose
 * between two, so the default tool list costs fewer bytes. edit.multi runs the `edits` shape alone.
 */
const ReplaceArgs = z
  .object({
    path: z.string().describe("File, relative to the workspace root"),
    old: z
      .string()
      .optional()
      .describe("Exact text to replace, copied from the file without line numbers; must occur once"),
    new: z.string().optional().describe("Replacement for old, written literally"),
    edits: z
      .array(Edit)
      .min(1)
      .optional()
      .describe(
        "Instead of old/new: several replacements, each matched against the original, none overlapping",
      ),
    dry: z.boolean().optional().describe("Only show the diff"),
  })
  .strict()
  .superRefine(function oneShape(a, ctx) {
    const single = a.old !== undefined || a.new !== undefined;
    if (single && a.edits !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["edits"],
        message: "give either old and new, or edits, not both",
      });
    else if (!single && a.edits === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["old"],
        message: "give old and new (one change) or edits (several)",
      });
    else if (single && (a.old === undefined || a.new === undefined))
      ctx.addIssue({
        code: "custom",
        path: [a.old === undefined ? "old" : "new"],
        message: "old and new go together",
      });
  });

/** edit.replace: exact, unique replacements in an existing file — one, or several all or nothing. */
export function createReplaceTool(): BuiltinTool {
  return defineBuiltin({
    name: "edit.replace",
    description:
      "Replace exact, unique text in an existing file: old/new for one change, edits for several (all or nothing). On any error nothing is written; newlines follow the file's style; the result shows a compact diff.",
    snippet: "replace unique text in a file (one or several edits)",
    guidelines: [
      "Read a file with edit.read before editing it.",
      "Use edit.replace for changes to existing files; keep old as short as possible while still unique, and copy it exactly from the file.",
      "When old is reported ambiguous, add neighbouring lines to it; when not found, read the file again rather than guessing.",
      "For several changes to one file make one call with edits; merge changes that touch the same lines into one edit.",
    ],
    schema: ReplaceArgs,
    sequential: true,
    awaitsIntent: true,
    intent(a, ctx) {
      const edits = a.edits ?? [{ old: a.old as string, new: a.new as string }];
      return planFileChange({ path: a.path, edits, dry: a.dry ?? false, label: String }, ctx);
    },
    async execute(a, ctx) {
      const dry = a.dry ?? false;
      if (a.edits)
        return editFile({ path: a.path, edits: a.edits, dry, label: (i) => `edits[${i}].old` }, ctx);
      return editFile(
        { path: a.path, edits: [{ old: a.old as string, new: a.new as string }], dry, label: () => "old" },
        ctx,
      );
    },
  });
}
