import { parseKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { formatHeadLine } from "../format.js";

/** `kvspace head <key>...` → `key<TAB>kind<TAB>ro=0|1<TAB>version=N<TAB>createRev=N<TAB>modRev=N`. */
export const headCommand = defineCommand({
  name: "head",
  usage: "head <key>...",
  summary: "print metadata",
  help: "-o json (or ndjson): one object a key, {key, kind, ro, version, createRev, modRev, mtime[, vid]}, or {key, absent: true}.",
  args: { min: 1 },
  outputs: ["json", "ndjson"],
  async run({ positionals: keys }, { tree, stdout, output = "text" }) {
    for (const key of keys) parseKey(key);
    for (const key of keys) {
      const node = await tree.get(key);
      if (output === "text") await writeLine(stdout, formatHeadLine(key, node));
      else if (node === undefined) await writeJson(stdout, { key, absent: true });
      else {
        const { key: k, kind, ro, version, createRev, modRev, mtime, vid } = node;
        await writeJson(stdout, {
          key: k,
          kind,
          ro,
          version,
          createRev,
          modRev,
          mtime,
          ...(vid ? { vid } : {}),
        });
      }
    }
    return 0;
  },
});
