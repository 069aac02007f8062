import { describeStore } from "../../tree/index.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { confirmDestructive } from "../confirm.js";
import { storeSpec } from "../open-store.js";

/**
 * `kvspace clear [--yes]`: empties the whole store, after a yes on the terminal (or `--yes`), then
 * writes the shipped prompts, tools and policy back into /byteseek/ (unless BYTESEEK_SEED=0) and
 * says which it did on stderr.
 */
export const clearCommand = defineCommand({
  name: "clear",
  usage: "clear [--yes]",
  summary: "empty the whole store (asks first), then reseed /byteseek/",
  help: [
    "Removes every key — your data, prompts, tool declarations, the policy, call records — then writes the",
    "shipped prompts, tools and policy into /byteseek/ again (not with BYTESEEK_SEED=0). Asks on a terminal;",
    "elsewhere it needs --yes. To remove one directory: kvspace deltree <dir/>.",
    "-o json prints {rev, seeded}: the revision of the clear, and whether /byteseek/ was written again.",
  ].join("\n"),
  outputs: ["json"],
  args: { min: 0, max: 0 },
  flags: { yes: "bool" },
  flagHelp: { yes: "do not ask: empty the store" },
  async run({ flags }, ctx) {
    const where = describeStore(storeSpec(ctx.env, ctx.cwd));
    await confirmDestructive(ctx, flags, `empty the whole store at ${where}`, "clear");
    const { rev } = await ctx.tree.clear();
    if (ctx.output === "json") await writeJson(ctx.stdout, { rev, seeded: ctx.seed !== undefined });
    if (ctx.seed) {
      await ctx.seed();
      await writeLine(ctx.stderr, "cleared; /byteseek/ holds the shipped prompts, tools and policy again");
    } else await writeLine(ctx.stderr, "cleared; /byteseek/ left empty (BYTESEEK_SEED=0)");
    return 0;
  },
});
