import { z } from "zod";
import { formatValue } from "../../tree/value.js";
import { defineBuiltin } from "../catalogue/declare.js";
import { maskSecrets } from "../mcp/registry.js";
import type { BuiltinTool } from "../types.js";
import { fromTreeError, guardKey } from "./common.js";

const TreeGetArgs = z
  .object({
    key: z.string().describe("Absolute key, e.g. /byteseek/tools/edit.read; a directory ends with '/'"),
  })
  .strict();

/** `tree.get`: one value (kind, version, flags and the value itself) or a directory's size. */
export function createTreeGetTool(): BuiltinTool {
  return defineBuiltin({
    name: "tree.get",
    description:
      "Read one key of the byteseek tree: its value with its kind, version and flags. Tool declarations live at /byteseek/tools/<name>, prompts at /byteseek/prompt/<name>.",
    snippet: "read a tree key (tool declarations, prompts, records)",
    guidelines: [
      "Read a tool's declaration with tree.get /byteseek/tools/<name> before changing it with tree.set.",
      "Use tree.list on a directory (key ending in '/') to see what exists before guessing keys.",
    ],
    schema: TreeGetArgs,
    sequential: false,
    async execute({ key }, ctx) {
      guardKey(key, "read");
      const node = await ctx.tree.get(key).catch(fromTreeError);
      if (!node) {
        const dirHint = key.endsWith("/") ? "" : ` (if it is a directory, ask for ${key}/)`;
        return {
          text: `${key} does not exist${dirHint}; tree.list its parent to see what does.`,
          details: { key, exists: false },
        };
      }
      const flags = [
        `version ${node.version}`,
        node.ro ? "read-only" : "",
        node.vid ? `owner ${node.vid}` : "",
      ]
        .filter(Boolean)
        .join(", ");
      if (node.kind === "index")
        return {
          text: `${key} is a directory with ${node.count} entries (${flags}); tree.list it to see them.`,
          details: { key, kind: "index", count: node.count, version: node.version },
        };
      // a registry entry's credentials are a person's to read: masked, their names kept
      const text =
        node.kind === "json"
          ? JSON.stringify(maskSecrets(key, node.value.value), null, 2)
          : formatValue(node.value);
      return {
        text: `${key} (${node.kind}, ${flags}):\n${text}`,
        details: { key, kind: node.kind, version: node.version, modRev: node.modRev, ro: node.ro },
      };
    },
  });
}
