import { dirs } from "../../shared/keys.js";
import { parseDirKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeLine, writeResultJson } from "../command.js";
import { confirmDestructive } from "../confirm.js";

/** Directories whose removal takes byteseek's own entries with it: asked about first. */
const GUARDED = new Set(["/", dirs.byteseek]);

/**
 * `kvspace deltree <dir/> [--force] [--yes]`: the directory and everything under it; an absent one
 * is not an error. `/` and `/byteseek/` are removed only after a yes on the terminal (or `--yes`),
 * and that yes covers their read-only keys too (the policy is read-only, and written again on the
 * next open): asking for `--force` as well would be a second confirmation of the same thing.
 * Elsewhere a read-only key still needs `--force`.
 */
export const deltreeCommand = defineCommand({
  name: "deltree",
  usage: "deltree <dir/> [--force] [--yes]",
  summary: "delete a directory and everything under it (/ and /byteseek/ ask first)",
  help: [
    "An absent directory is not an error. Deleting / or /byteseek/ asks on a terminal and needs --yes elsewhere;",
    "that yes includes their read-only keys (no --force needed). The shipped prompts, tools and policy are",
    "written again the next time kvspace or byteseek opens the store. Elsewhere, read-only keys need --force.",
    "-o json prints {key, rev, version, removed}.",
  ].join("\n"),
  outputs: ["json"],
  args: { min: 1, max: 1 },
  flags: { force: "bool", yes: "bool" },
  flagHelp: {
    force: "delete read-only keys too",
    yes: "do not ask before deleting / or /byteseek/ (read-only keys included)",
  },
  async run({ positionals: [dir], flags }, ctx) {
    const key = parseDirKey(dir).key;
    const guarded = GUARDED.has(key);
    if (guarded)
      await confirmDestructive(
        ctx,
        flags,
        `delete ${key} and everything under it, read-only keys included`,
        `deltree ${key}`,
      );
    const result = await ctx.tree.deltree(key, { force: guarded || flags.force === true });
    if (ctx.output === "json") await writeJson(ctx.stdout, writeResultJson(result));
    if (guarded) await writeLine(ctx.stderr, `deleted ${key} (${result.removed} keys)`);
    return 0;
  },
});
