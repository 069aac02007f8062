import { parseKey } from "../../tree/path.js";
import { defineCommand, writeLine } from "../command.js";
import { formatGetLine } from "../format.js";

/** `kvspace get <key>...` → `key<TAB>kind:value`, or `key<TAB>(nil)` when absent. */
export const getCommand = defineCommand({
  name: "get",
  usage: "get <key>...",
  summary: "print values",
  args: { min: 1 },
  async run({ positionals: keys }, { tree, stdout }) {
    for (const key of keys) parseKey(key);
    for (const key of keys) await writeLine(stdout, formatGetLine(key, await tree.get(key)));
    return 0;
  },
});
