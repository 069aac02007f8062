import { RUN_ID } from "../../tools/run-id.js";
import { parseDirKey, parseKey } from "../../tree/path.js";
import { parseLiteral } from "../../tree/value.js";
import { defineCommand, writeJson, writeResultJson } from "../command.js";
import { usageError } from "../errors.js";

const USAGE = "set <key> <literal> [ro|rw] [vid] [--force] [--unchecked]";

/**
 * `kvspace set <key> <literal> [ro|rw] [vid]`: literals `int:42`, `float:3.5`, `bool:true`,
 * `string:text`, `json:{"a":1}`, and `nil:` which deletes. `ro`/`rw` set the read-only flag
 * (omitted keeps it), `vid` names the owner run (upstream's fourth argument); `--force` writes
 * a read-only key; `--unchecked` stores a tool declaration, policy or MCP server entry that does
 * not validate (refused otherwise, with the problems). `set <dir/> index:` makes a directory, as
 * upstream's scripts do.
 */
export const setCommand = defineCommand({
  name: "set",
  usage: USAGE,
  summary: "write a value (nil: deletes; <dir/> index: makes a directory)",
  help: [
    "Examples:",
    "  kvspace set /notes/today 'string:hello world'     quote a literal with spaces or shell characters",
    "  kvspace set /cfg/limit int:10 ro                   read-only from now on (writing it again needs --force)",
    "  kvspace set /jobs/a 'json:{\"n\":1}' rw run7        writable, owned by run run7",
    "  kvspace set /queue/ index:                         a directory (as mkindex)",
    "",
    "A tool declaration (/byteseek/tools/<name>), the policy (/byteseek/policy, read-only: --force)",
    "or an MCP server entry (/byteseek/mcp/<name>) that does not validate is refused with its",
    "problems; --unchecked stores it anyway, and kvspace tools --check reports it.",
    "",
    "Prints nothing; -o json prints the write: {key, rev, version} (nil: {key, rev, version, deleted}).",
  ].join("\n"),
  outputs: ["json"],
  args: { min: 2, max: 4 },
  flags: { force: "bool", unchecked: "bool" },
  flagHelp: {
    force: "write even if the key is read-only",
    unchecked: "store a declaration or policy even if it does not validate",
  },
  extraArgument(_extra, positionals) {
    return spacesHint(positionals, 4);
  },
  async run({ positionals, flags }, { tree, stdout, output = "text" }) {
    const print = (result: Parameters<typeof writeResultJson>[0]) =>
      output === "json" ? writeJson(stdout, writeResultJson(result)) : undefined;
    const [key, literal, mode, vid] = positionals as [string, string, string | undefined, string | undefined];
    if (mode !== undefined && mode !== "ro" && mode !== "rw")
      throw usageError(USAGE, spacesHint(positionals, 2));
    if (vid !== undefined && !RUN_ID.test(vid))
      throw usageError(USAGE, `'${vid}' is not a run id (letters, digits and _.:@-, at most 128)`);
    const force = flags.force === true;
    if (literal === "index:") {
      if (!key.endsWith("/"))
        throw usageError(USAGE, `index: makes a directory, and a directory's key ends with /: ${key}/`);
      await print(await tree.mkindex(parseDirKey(key).key));
      return 0;
    }
    parseKey(key);
    const value = parseLiteral(literal);
    if (value === null) await print(await tree.del(key, { force }));
    else
      await print(
        await tree.set(key, value, {
          force,
          ...(flags.unchecked === true ? { unchecked: true } : {}),
          ...(mode === undefined ? {} : { ro: mode === "ro" }),
          ...(vid === undefined ? {} : { vid }),
        }),
      );
    return 0;
  },
});

/** The argument at `from` was meant as part of the value: say so, with the line quoted as it should be. */
function spacesHint(positionals: readonly string[], from: number): string {
  const [key, ...rest] = positionals;
  const value = rest.join(" ");
  const word = positionals[from];
  const what = from === 2 ? "is not ro|rw" : "is unexpected after the owner vid";
  return `'${word}' ${what} — quote a value with spaces: kvspace set ${key} '${value.replaceAll("'", "'\\''")}'`;
}
