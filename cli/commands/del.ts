import { parseKey } from "../../tree/path.js";
import { defineCommand } from "../command.js";

/** `kvspace del <key>...`: deleting what is absent is not an error. */
export const delCommand = defineCommand({
  name: "del",
  usage: "del <key>... [--force]",
  summary: "delete keys",
  args: { min: 1 },
  flags: { force: "bool" },
  flagHelp: { force: "delete read-only keys too" },
  async run({ positionals: keys, flags }, { tree }) {
    for (const key of keys) parseKey(key);
    for (const key of keys) await tree.del(key, { force: flags.force === true });
    return 0;
  },
});
