import { parseValueKey } from "../../tree/path.js";
import { defineCommand, writeLine } from "../command.js";
import { formatHistoryLine } from "../format.js";

/** `kvspace history <key>` → one line per retained previous version, newest first. */
export const historyCommand = defineCommand({
  name: "history",
  usage: "history <key>",
  summary: "print a value's retained previous versions",
  args: { min: 1, max: 1 },
  async run({ positionals: [key] }, { tree, stdout }) {
    for (const entry of await tree.history(parseValueKey(key).key)) {
      await writeLine(stdout, formatHistoryLine(entry));
    }
    return 0;
  },
});
