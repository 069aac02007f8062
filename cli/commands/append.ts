import { parseDirKey } from "../../tree/path.js";
import { parseLiteral } from "../../tree/value.js";
import { defineCommand, writeJson, writeLine, writeResultJson } from "../command.js";
import { CliError } from "../errors.js";

/** `kvspace append <dir/> <literal>`: creates the next child `<n>` and prints its key. */
export const appendCommand = defineCommand({
  name: "append",
  usage: "append <dir/> <literal>",
  summary: "add the next numbered child",
  help: "Prints the new child's key; -o json prints the write: {key, rev, version}.",
  args: { min: 2, max: 2 },
  outputs: ["json"],
  async run({ positionals: [dir, literal] }, { tree, stdout, output = "text" }) {
    const key = parseDirKey(dir).key;
    const value = parseLiteral(literal ?? "");
    if (value === null) throw new CliError("CLI_INPUT", "append needs a value: nil: is not one");
    const result = await tree.append(key, value);
    await (output === "json" ? writeJson(stdout, writeResultJson(result)) : writeLine(stdout, result.key));
    return 0;
  },
});
