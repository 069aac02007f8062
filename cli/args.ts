import type { CommandSpec, ParsedArgs } from "./command.js";
import { usageError } from "./errors.js";

/**
 * Parses a subcommand's arguments against its declaration. Flags may come anywhere; `--` ends
 * flags; `-` is a positional (stdin). Anything malformed is a usage error (exit 2).
 */
export function parseArgs(
  spec: Pick<CommandSpec, "usage" | "args" | "flags">,
  argv: readonly string[],
): ParsedArgs {
  const flags: ParsedArgs["flags"] = {};
  const positionals: string[] = [];
  const declared = spec.flags ?? {};
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith("--")) {
      positionals.push(token);
      continue;
    }
    const eq = token.indexOf("=");
    const name = token.slice(2, eq < 0 ? undefined : eq);
    const inline = eq < 0 ? undefined : token.slice(eq + 1);
    const type = Object.hasOwn(declared, name) ? declared[name] : undefined;
    if (type === "bool") {
      if (inline === undefined || inline === "true") flags[name] = true;
      else if (inline === "false") flags[name] = false;
      else throw usageError(spec.usage);
    } else if (type === "value") {
      const value = inline ?? argv[++i];
      if (value === undefined || value === "") throw usageError(spec.usage);
      flags[name] = value;
    } else {
      throw usageError(spec.usage);
    }
  }
  if (positionals.length < spec.args.min || positionals.length > (spec.args.max ?? Number.POSITIVE_INFINITY))
    throw usageError(spec.usage);
  return { positionals, flags };
}
