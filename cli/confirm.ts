import type { CommandContext, ParsedArgs } from "./command.js";
import { CliError } from "./errors.js";

/**
 * Lets a destructive command go on: with `--yes`, or when a person answers yes on the terminal.
 * Without a terminal and without `--yes` it refuses (exit 1) saying how to confirm; nothing is
 * deleted either way until it returns.
 */
export async function confirmDestructive(
  ctx: Pick<CommandContext, "confirm">,
  flags: ParsedArgs["flags"],
  what: string,
  line: string,
): Promise<void> {
  if (flags.yes === true) return;
  if (ctx.confirm === undefined)
    throw new CliError(
      "CLI_NOT_CONFIRMED",
      `kvspace would ${what}; there is no terminal to ask on, so confirm with --yes: kvspace ${line} --yes`,
    );
  if (!(await ctx.confirm(`${what[0]?.toUpperCase()}${what.slice(1)}?`)))
    throw new CliError("CLI_NOT_CONFIRMED", "not confirmed: nothing deleted");
}
