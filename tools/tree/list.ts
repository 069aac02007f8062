import { z } from "zod";
import type { ListChild } from "../../tree/types.js";
import { formatValue, json } from "../../tree/value.js";
import { defineBuiltin } from "../catalogue/declare.js";
import { maskSecrets } from "../mcp/registry.js";
import type { BuiltinTool } from "../types.js";
import { fromTreeError, guardKey, hiddenKey } from "./common.js";

const TreeListArgs = z
  .object({
    key: z.string().default("/").describe("Directory key, ending in '/', e.g. /byteseek/tools/"),
    limit: z.number().int().min(1).max(1000).default(100).describe("At most this many entries (default 100)"),
    after: z.string().optional().describe("Continue after this entry name (from the previous page)"),
  })
  .strict();

const PREVIEW = 120;
/**
 * Children read from the tree at a time: their values are cut to a preview as they come, so a
 * page of large values (1,000 of 1 MiB) never has more than this many whole values in memory.
 */
const CHUNK = 32;

/** One child of `dir` as a line: name, kind, and the start of its value (secret fields masked). */
function line(dir: string, c: ListChild): string {
  if (c.kind === "index") return `${c.name}\tindex\t(${c.count} entries)`;
  const value = c.value?.kind === "json" ? json(maskSecrets(`${dir}${c.name}`, c.value.value)) : c.value;
  if (value === undefined) return `${c.name}\t${c.kind}\t`;
  // Whitespace is collapsed on the start of the text only, not on a copy of all of it.
  const full = formatValue(value);
  const text = full.slice(0, PREVIEW * 4).replace(/\s+/g, " ");
  const cut = text.length > PREVIEW || full.length > PREVIEW * 4;
  return `${c.name}\t${c.kind}\t${cut ? `${text.slice(0, PREVIEW)}…` : text}`;
}

/** `tree.list`: a directory's children, one per line: name, kind, and a preview of the value. */
export function createTreeListTool(): BuiltinTool {
  return defineBuiltin({
    name: "tree.list",
    description:
      "List the children of a directory of the byteseek tree: one line per entry with its kind and the start of its value; directories end with '/'.",
    snippet: "list a tree directory, e.g. /byteseek/tools/",
    guidelines: ["List /byteseek/tools/ to see every declared tool, including ones you cannot call."],
    schema: TreeListArgs,
    sequential: false,
    async execute(parsed, ctx) {
      const dir = parsed.key.endsWith("/") ? parsed.key : `${parsed.key}/`;
      guardKey(dir, "read");
      const lines: string[] = [];
      let after = parsed.after;
      let next: string | undefined;
      for (;;) {
        const page = await ctx.tree
          .list(dir, {
            limit: Math.min(CHUNK, parsed.limit - lines.length),
            ...(after ? { after } : {}),
          })
          .catch(fromTreeError);
        // the policy and denied keys are left out, so a listing never previews them
        for (const c of page.children)
          if (!hiddenKey(`${dir}${c.name}`, ctx.denyKeys)) lines.push(line(dir, c));
        next = page.next;
        if (next === undefined || lines.length >= parsed.limit) break;
        after = next;
      }
      if (lines.length === 0) return { text: `${dir} is empty.`, details: { key: dir, count: 0 } };
      const more = next ? `\n(more entries: call again with after=${JSON.stringify(next)})` : "";
      return {
        text: `${dir}\n${lines.join("\n")}${more}`,
        details: { key: dir, count: lines.length, ...(next ? { next } : {}) },
      };
    },
  });
}
