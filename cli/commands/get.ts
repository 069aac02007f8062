import { nodeToJson } from "../../tree/http/convert.js";
import { parseKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { formatGetLine } from "../format.js";

/**
 * `kvspace get <key>...` → `key<TAB>kind:value`, or `key<TAB>(nil)` when absent. An absent key
 * with a directory of the same name (`/a` and `/a/`) says so on stderr: the slash was likely meant.
 */
export const getCommand = defineCommand({
  name: "get",
  usage: "get <key>...",
  summary: "print values",
  help: [
    "Prints key<TAB>kind:value per key, key<TAB>index:(N) for a directory (its key ends with /),",
    "key<TAB>(nil) for an absent key. /a (a value) and /a/ (a directory) are different keys.",
    "-o json (or ndjson): one JSON object a key, as GET /v1/tree/<key> answers, {key, absent: true} when absent.",
  ].join("\n"),
  args: { min: 1 },
  outputs: ["json", "ndjson"],
  async run({ positionals: keys }, { tree, stdout, stderr, output = "text" }) {
    for (const key of keys) parseKey(key);
    for (const key of keys) {
      const node = await tree.get(key);
      if (output === "text") await writeLine(stdout, formatGetLine(key, node));
      else await writeJson(stdout, node === undefined ? { key, absent: true } : nodeToJson(node));
      if (node !== undefined || key.endsWith("/")) continue;
      const dir = await tree.get(`${key}/`);
      if (dir?.kind === "index")
        await writeLine(
          stderr,
          `kvspace get: ${key} holds no value, but ${key}/ is a directory (${dir.count} entries): kvspace list ${key}/`,
        );
    }
    return 0;
  },
});
