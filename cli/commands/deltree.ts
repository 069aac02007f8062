import { parseDirKey } from "../../tree/path.js";
import { defineCommand } from "../command.js";

/** `kvspace deltree <dir/>`: the directory and everything under it; an absent one is not an error. */
export const deltreeCommand = defineCommand({
  name: "deltree",
  usage: "deltree <dir/> [--force]",
  summary: "delete a directory and everything under it",
  args: { min: 1, max: 1 },
  flags: { force: "bool" },
  async run({ positionals: [dir], flags }, { tree }) {
    await tree.deltree(parseDirKey(dir).key, { force: flags.force === true });
    return 0;
  },
});
