import { defineCommand } from "../command.js";

/** `kvspace clear`: empties the whole store. */
export const clearCommand = defineCommand({
  name: "clear",
  usage: "clear",
  summary: "empty the whole store",
  args: { min: 0, max: 0 },
  async run(_input, { tree }) {
    await tree.clear();
    return 0;
  },
});
