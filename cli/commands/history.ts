import { historyToJson } from "../../tree/http/convert.js";
import { parseValueKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { formatHistoryLine } from "../format.js";

/**
 * `kvspace history <key>` → one line per retained previous version, newest first. None kept
 * prints nothing on stdout and says why on stderr (absent key, or no history kept where it is).
 */
export const historyCommand = defineCommand({
  name: "history",
  usage: "history <key>",
  summary: "print a value's retained previous versions",
  help: [
    "Prints key<TAB>version=N<TAB>modRev=N<TAB>kind:value per kept version, newest first (deleted: a trailing deleted).",
    "Previous versions are kept where BYTESEEK_HISTORY says (default: 10 under /byteseek/, none elsewhere);",
    "with none kept, stdout stays empty and a note on stderr says why.",
    "-o json: {key, history: [...]} as GET /v1/tree/<key>?history=1 answers; -o ndjson: one version a line.",
  ].join("\n"),
  args: { min: 1, max: 1 },
  outputs: ["json", "ndjson"],
  async run({ positionals: [key] }, { tree, stdout, stderr, output = "text" }) {
    const k = parseValueKey(key).key;
    const entries = await tree.history(k);
    if (output === "json") await writeJson(stdout, { key: k, history: entries.map(historyToJson) });
    else
      for (const entry of entries)
        await (output === "ndjson"
          ? writeJson(stdout, { key: k, ...historyToJson(entry) })
          : writeLine(stdout, formatHistoryLine(entry)));
    if (entries.length === 0) {
      const node = await tree.get(k);
      await writeLine(
        stderr,
        node === undefined
          ? `kvspace history: ${k} does not exist, and no previous versions of it are kept`
          : `kvspace history: ${k} (version ${node.version}) has no previous versions kept; BYTESEEK_HISTORY sets where they are kept (default: 10 under /byteseek/, none elsewhere)`,
      );
    }
    return 0;
  },
});
