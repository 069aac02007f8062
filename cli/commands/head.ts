import { parseKey } from "../../tree/path.js";
import { defineCommand, writeLine } from "../command.js";
import { formatHeadLine } from "../format.js";

/** `kvspace head <key>...` → `key<TAB>kind<TAB>ro=0|1<TAB>version=N<TAB>createRev=N<TAB>modRev=N`. */
export const headCommand = defineCommand({
  name: "head",
  usage: "head <key>...",
  summary: "print metadata",
  args: { min: 1 },
  async run({ positionals: keys }, { tree, stdout }) {
    for (const key of keys) parseKey(key);
    for (const key of keys) await writeLine(stdout, formatHeadLine(key, await tree.get(key)));
    return 0;
  },
});
