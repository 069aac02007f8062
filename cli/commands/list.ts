import { parseDirKey } from "../../tree/path.js";
import { defineCommand, writeLine } from "../command.js";
import { formatListLine } from "../format.js";
import { listChildren } from "./list-children.js";

/**
 * `kvspace list|ls [--kind=false] <dir/>` → `name<TAB>kind<TAB>value` per child,
 * `name/<TAB>index<TAB>(N)` for a child directory.
 */
export const listCommand = defineCommand({
  name: "list",
  aliases: ["ls"],
  usage: "list|ls [--kind=false] <dir/>",
  summary: "list a directory's children",
  args: { min: 1, max: 1 },
  flags: { kind: "bool" },
  async run({ positionals: [dir], flags }, { tree, stdout, signal }) {
    const key = parseDirKey(dir).key;
    const kind = flags.kind !== false;
    for await (const child of listChildren(tree, key, { signal })) {
      await writeLine(stdout, formatListLine(child, { kind }));
    }
    return 0;
  },
});
