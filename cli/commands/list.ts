import { isTreeError } from "../../tree/errors.js";
import { childToJson } from "../../tree/http/convert.js";
import type { ChildJson } from "../../tree/http/schemas.js";
import { parseDirKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { formatListLine } from "../format.js";
import { listChildren } from "./list-children.js";

/**
 * `kvspace list|ls [--kind=false] <dir/>` → `name<TAB>kind<TAB>value` per child,
 * `name/<TAB>index<TAB>(N)` for a child directory. A missing directory lists nothing and exits
 * 0, as upstream kvspace does (its scripts list directories they may not have made); a note on
 * stderr says it is missing.
 */
export const listCommand = defineCommand({
  name: "list",
  aliases: ["ls"],
  usage: "list|ls [--kind=false] <dir/>",
  summary: "list a directory's children",
  help: [
    "Prints name<TAB>kind<TAB>value per child, name/<TAB>index<TAB>(N) for a child directory,",
    "in natural order (0 1 2 … 10, then the rest by code point). A missing directory prints nothing",
    "(exit 0; a note on stderr).",
    "-o json: {key, children: [...]} as GET /v1/tree/<dir/> answers; -o ndjson: one child object a line.",
  ].join("\n"),
  outputs: ["json", "ndjson"],
  flagHelp: { kind: "--kind=false leaves the kind column out" },
  args: { min: 1, max: 1 },
  flags: { kind: "bool" },
  async run({ positionals: [dir], flags }, { tree, stdout, stderr, signal, output = "text" }) {
    const key = parseDirKey(dir).key;
    const kind = flags.kind !== false;
    const all: ChildJson[] = [];
    try {
      for await (const child of listChildren(tree, key, { signal, visibleCounts: output === "text" })) {
        if (output === "text") await writeLine(stdout, formatListLine(child, { kind }));
        else if (output === "ndjson") await writeJson(stdout, childToJson(child));
        else all.push(childToJson(child));
      }
    } catch (err) {
      if (!isTreeError(err, "TREE_NOT_FOUND")) throw err;
      await writeLine(stderr, `kvspace list: no directory ${key} (nothing listed)`);
    }
    if (output === "json") await writeJson(stdout, { key, children: all });
    return 0;
  },
});
