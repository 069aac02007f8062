import { parseDirKey } from "../../tree/path.js";
import { parseLiteral } from "../../tree/value.js";
import { defineCommand, writeLine } from "../command.js";
import { CliError } from "../errors.js";

/** `kvspace append <dir/> <literal>`: creates the next child `<n>` and prints its key. */
export const appendCommand = defineCommand({
  name: "append",
  usage: "append <dir/> <literal>",
  summary: "add the next numbered child",
  args: { min: 2, max: 2 },
  async run({ positionals: [dir, literal] }, { tree, stdout }) {
    const key = parseDirKey(dir).key;
    const value = parseLiteral(literal ?? "");
    if (value === null) throw new CliError("CLI_INPUT", "append needs a value: nil: is not one");
    const result = await tree.append(key, value);
    await writeLine(stdout, result.key);
    return 0;
  },
});
