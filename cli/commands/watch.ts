import { eventToJson } from "../../tree/http/convert.js";
import { parseKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { usageError } from "../errors.js";
import { formatWatchLine } from "../format.js";

const USAGE = "watch <dir/> [--from REV]";

/**
 * `kvspace watch <dir/> [--from REV]` → one line per change, `rev<TAB>type<TAB>key[<TAB>kind:value]`,
 * until SIGINT or SIGTERM (exit 0). `--from` replays the retained changes from that revision first.
 */
export const watchCommand = defineCommand({
  name: "watch",
  usage: USAGE,
  summary: "print changes as they happen, until interrupted",
  help: "-o ndjson: one event a line, {type, key, rev, prevRev[, kind, value, version]} as GET /v1/watch sends them.",
  args: { min: 1, max: 1 },
  flags: { from: "value" },
  flagHelp: { from: "replay the retained changes from revision REV first" },
  outputs: ["ndjson"],
  async run({ positionals: [prefix], flags }, { tree, stdout, signal, output = "text" }) {
    const key = parseKey(prefix).key;
    let fromRev: number | undefined;
    if (typeof flags.from === "string") {
      if (!/^[0-9]+$/.test(flags.from))
        throw usageError(
          USAGE,
          `--from takes a revision (a whole number, e.g. --from 1), got '${flags.from}'`,
        );
      fromRev = Number(flags.from);
    }
    if (signal.aborted) return 0;
    // The embedded tree's watch waits on a bare promise: without a live handle Node would see an
    // empty event loop and exit (code 13) instead of following.
    const keepAlive = setInterval(() => {}, 1 << 30);
    try {
      for await (const batch of tree.watch(key, { signal, ...(fromRev === undefined ? {} : { fromRev }) })) {
        for (const event of batch.events)
          await (output === "ndjson"
            ? writeJson(stdout, eventToJson(event))
            : writeLine(stdout, formatWatchLine(event)));
        if (signal.aborted) break;
      }
    } catch (err) {
      // Being interrupted is how a watch ends; anything else is an error.
      if (!signal.aborted) throw err;
    } finally {
      clearInterval(keepAlive);
    }
    return 0;
  },
});
