import { z } from "zod";
import { formatValue } from "../../tree/value.js";
import { paramsFromZod } from "../json-schema.js";
import type { BuiltinTool, ToolContext, ToolOutput } from "../types.js";
import { fromTreeError, guardKey, hiddenKey } from "./common.js";

export const TreeListArgs = z
  .object({
    key: z.string().default("/").describe("Directory key, ending in '/', e.g. /byteseek/tools/"),
    limit: z.number().int().min(1).max(1000).default(100).describe("At most this many entries (default 100)"),
    after: z.string().optional().describe("Continue after this entry name (from the previous page)"),
  })
  .strict();
export type TreeListArgs = z.infer<typeof TreeListArgs>;

const PREVIEW = 120;

/** `tree.list`: a directory's children, one per line: name, kind, and a preview of the value. */
export function createTreeListTool(): BuiltinTool<TreeListArgs> {
  return {
    ref: "tree.list",
    declaration: {
      name: "tree.list",
      description:
        "List the children of a directory of the byteseek tree: one line per entry with its kind and the start of its value; directories end with '/'.",
      snippet: "list a tree directory, e.g. /byteseek/tools/",
      guidelines: ["List /byteseek/tools/ to see every declared tool, including ones you cannot call."],
      params: paramsFromZod(TreeListArgs),
      sequential: false,
      impl: { kind: "builtin", ref: "tree.list" },
    },
    async execute(args: TreeListArgs, ctx: ToolContext): Promise<ToolOutput> {
      const parsed = TreeListArgs.parse(args);
      const dir = parsed.key.endsWith("/") ? parsed.key : `${parsed.key}/`;
      guardKey(dir, "read");
      const page = await ctx.tree
        .list(dir, { limit: parsed.limit, ...(parsed.after ? { after: parsed.after } : {}) })
        .catch(fromTreeError);
      // the policy and denied keys are left out, so a listing never previews them
      const shown = page.children.filter((c) => !hiddenKey(`${dir}${c.name}`, ctx.denyKeys));
      if (shown.length === 0) return { text: `${dir} is empty.`, details: { key: dir, count: 0 } };
      const lines = shown.map(function line(c) {
        if (c.kind === "index") return `${c.name}\tindex\t(${c.count} entries)`;
        const text = c.value ? formatValue(c.value).replace(/\s+/g, " ") : "";
        return `${c.name}\t${c.kind}\t${text.length > PREVIEW ? `${text.slice(0, PREVIEW)}…` : text}`;
      });
      const more = page.next ? `\n(more entries: call again with after=${JSON.stringify(page.next)})` : "";
      return {
        text: `${dir}\n${lines.join("\n")}${more}`,
        details: { key: dir, count: shown.length, ...(page.next ? { next: page.next } : {}) },
      };
    },
  };
}
