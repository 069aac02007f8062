import { z } from "zod";
import { nodeHash } from "../call/intent.js";
import { defineBuiltin } from "../catalogue/declare.js";
import { guardRunWrite } from "../gate/ownership.js";
import type { BuiltinTool } from "../types.js";
import { fromTreeError, guardKey } from "./common.js";

const TreeDelArgs = z
  .object({
    key: z.string().describe("Absolute key of a value, or of an empty directory (ending in '/')"),
    ifVersion: z.number().int().min(1).optional().describe("Delete only if the key's version is still this"),
  })
  .strict();

/** `tree.del`: deletes one value or one empty directory; never whole subtrees, never read-only keys. */
export function createTreeDelTool(): BuiltinTool {
  return defineBuiltin({
    name: "tree.del",
    description:
      "Delete one value (or one empty directory) of the byteseek tree. Deleting /byteseek/tools/<name> removes that tool. Read-only keys and the policy cannot be deleted.",
    snippet: "delete a tree value, e.g. a tool you declared",
    guidelines: ["Delete only what you wrote yourself; tree.get it first to be sure of what you remove."],
    schema: TreeDelArgs,
    sequential: true,
    confirm: false,
    // the key's version and value now: a resumed run finds it gone (done) or as it was (not done)
    async keyIntent(parsed, ctx) {
      try {
        guardKey(parsed.key, "delete");
        const current = await ctx.tree.get(parsed.key);
        return [{ key: parsed.key, version: current?.version ?? 0, before: nodeHash(current), after: null }];
      } catch {
        return []; // refused as it stands: the call deletes nothing
      }
    },
    async execute(parsed, ctx) {
      guardKey(parsed.key, "delete");
      await guardRunWrite({
        tree: ctx.tree,
        vid: ctx.vid,
        approved: ctx.approved === true,
        key: parsed.key,
        action: "del",
      }).catch(fromTreeError);
      const res = await ctx.tree
        .del(parsed.key, parsed.ifVersion !== undefined ? { ifVersion: parsed.ifVersion } : {})
        .catch(fromTreeError);
      return {
        text: res.deleted ? `Deleted ${parsed.key}.` : `${parsed.key} did not exist; nothing to delete.`,
        details: { key: parsed.key, deleted: res.deleted, rev: res.rev },
      };
    },
  });
}
