import { z } from "zod";
import { defineBuiltin } from "../catalogue/declare.js";
import type { BuiltinTool } from "../types.js";
import { editFile, planFileChange } from "./edit-file.js";

const MultiArgs = z
  .object({
    path: z.string().describe("File to edit, relative to the workspace root (or absolute inside it)."),
    edits: z
      .array(
        z
          .object({
            old: z
              .string()
              .describe(
                "Exact text for one replacement. It must be unique in the original file and must not overlap any other edit's old.",
              ),
            new: z.string().describe("Replacement text, written literally."),
          })
          .strict(),
      )
      .min(1)
      .describe("The replacements. Each is matched against the original file, not after the earlier edits."),
    dry: z.boolean().optional().describe("Only show the diff; write nothing."),
  })
  .strict();

/** edit.multi: several unique replacements in one file, all or nothing (edit.replace with edits, under its older name). */
export function createMultiTool(): BuiltinTool {
  return defineBuiltin({
    name: "edit.multi",
    description:
      "Make several replacements in one file at once. Every edit is matched against the original file, must be unique and must not overlap another; if any edit fails, nothing is written.",
    // no snippet: not offered to the model, where edit.replace's edits do the same; still callable by name
    guidelines: [],
    schema: MultiArgs,
    sequential: true,
    awaitsIntent: true,
    intent(a, ctx) {
      return planFileChange({ path: a.path, edits: a.edits, dry: a.dry ?? false, label: String }, ctx);
    },
    async execute(a, ctx) {
      return editFile(
        { path: a.path, edits: a.edits, dry: a.dry ?? false, label: (i) => `edits[${i}].old` },
        ctx,
      );
    },
  });
}
