import { parseDirKey } from "../../tree/path.js";
import { defineCommand } from "../command.js";

/** `kvspace mkindex <dir/>`: creates a directory and its missing parents. */
export const mkindexCommand = defineCommand({
  name: "mkindex",
  usage: "mkindex <dir/>",
  summary: "create a directory",
  args: { min: 1, max: 1 },
  async run({ positionals: [dir] }, { tree }) {
    await tree.mkindex(parseDirKey(dir).key);
    return 0;
  },
});
