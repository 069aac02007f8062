import { parseDirKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeResultJson } from "../command.js";

/** `kvspace mkindex <dir/>`: creates a directory and its missing parents. */
export const mkindexCommand = defineCommand({
  name: "mkindex",
  usage: "mkindex <dir/>",
  summary: "create a directory",
  help: "Prints nothing; -o json prints the write: {key, rev, version}.",
  args: { min: 1, max: 1 },
  outputs: ["json"],
  async run({ positionals: [dir] }, { tree, stdout, output = "text" }) {
    const result = await tree.mkindex(parseDirKey(dir).key);
    if (output === "json") await writeJson(stdout, writeResultJson(result));
    return 0;
  },
});
