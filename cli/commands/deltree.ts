import { parseDirKey } from "../../tree/path.js";
import { defineCommand, writeLine } from "../command.js";
import { confirmDestructive } from "../confirm.js";

/** Directories whose removal takes byteseek's own entries with it: asked about first. */
const GUARDED = new Set(["/", "/byteseek/"]);

/**
 * `kvspace deltree <dir/> [--force] [--yes]`: the directory and everything under it; an absent one
 * is not an error. `/` and `/byteseek/` are removed only after a yes on the terminal (or `--yes`).
 */
export const deltreeCommand = defineCommand({
  name: "deltree",
  usage: "deltree <dir/> [--force] [--yes]",
  summary: "delete a directory and everything under it (/ and /byteseek/ ask first)",
  help: [
    "An absent directory is not an error. Deleting / or /byteseek/ asks on a terminal and needs --yes elsewhere;",
    "the shipped prompts, tools and policy are written again the next time kvspace or byteseek opens the store.",
  ].join("\n"),
  args: { min: 1, max: 1 },
  flags: { force: "bool", yes: "bool" },
  flagHelp: { force: "delete read-only keys too", yes: "do not ask before deleting / or /byteseek/" },
  async run({ positionals: [dir], flags }, ctx) {
    const key = parseDirKey(dir).key;
    const guarded = GUARDED.has(key);
    if (guarded)
      await confirmDestructive(ctx, flags, `delete ${key} and everything under it`, `deltree ${key}`);
    const { removed } = await ctx.tree.deltree(key, { force: flags.force === true });
    if (guarded) await writeLine(ctx.stderr, `deleted ${key} (${removed} keys)`);
    return 0;
  },
});
