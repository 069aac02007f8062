import { parseKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeResultJson } from "../command.js";

/** `kvspace del <key>...`: deleting what is absent is not an error. */
export const delCommand = defineCommand({
  name: "del",
  usage: "del <key>... [--force]",
  summary: "delete keys",
  args: { min: 1 },
  flags: { force: "bool" },
  flagHelp: { force: "delete read-only keys too" },
  help: "Prints nothing; -o json prints one object a key: {key, rev, version, deleted} (deleted false: it was absent).",
  outputs: ["json"],
  async run({ positionals: keys, flags }, { tree, stdout, output = "text" }) {
    for (const key of keys) parseKey(key);
    for (const key of keys) {
      const result = await tree.del(key, { force: flags.force === true });
      if (output === "json") await writeJson(stdout, writeResultJson(result));
    }
    return 0;
  },
});
