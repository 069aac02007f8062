import { parseKey } from "../../tree/path.js";
import { parseLiteral } from "../../tree/value.js";
import { defineCommand } from "../command.js";
import { usageError } from "../errors.js";

const USAGE = "set <key> <literal> [ro|rw] [--force]";

/**
 * `kvspace set <key> <literal> [ro|rw]`: literals `int:42`, `float:3.5`, `bool:true`,
 * `string:text`, `json:{"a":1}`, and `nil:` which deletes. `ro`/`rw` set the read-only flag
 * (omitted keeps it); `--force` writes a read-only key.
 */
export const setCommand = defineCommand({
  name: "set",
  usage: USAGE,
  summary: "write a value (nil: deletes)",
  args: { min: 2, max: 3 },
  flags: { force: "bool" },
  async run({ positionals, flags }, { tree }) {
    const [key, literal, mode] = positionals as [string, string, string | undefined];
    if (mode !== undefined && mode !== "ro" && mode !== "rw") throw usageError(USAGE);
    parseKey(key);
    const value = parseLiteral(literal);
    const force = flags.force === true;
    if (value === null) await tree.del(key, { force });
    else await tree.set(key, value, { force, ...(mode === undefined ? {} : { ro: mode === "ro" }) });
    return 0;
  },
});
