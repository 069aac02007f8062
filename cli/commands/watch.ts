import { isTreeError } from "../../tree/errors.js";
import { eventToJson } from "../../tree/http/convert.js";
import { parseKey } from "../../tree/path.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { CliError, usageError } from "../errors.js";
import { formatWatchLine } from "../format.js";

const USAGE = "watch <dir/> [--from REV]";

/**
 * `kvspace watch <dir/> [--from REV]` → one line per change, `rev<TAB>type<TAB>key[<TAB>kind:value]`,
 * until SIGINT or SIGTERM (exit 0). `--from` replays the retained changes from that revision first.
 * Through a held folder, a watch whose holder stopped and none took its place (tree/held-socket.ts)
 * ends with exit 1, saying the revision to go on from: it does not take the folder over, which
 * would keep a restarting server from it. On a server's URL, one whose server went away and did not
 * come back within BYTESEEK_CLIENT_TIMEOUT ends the same way (run.ts's remote bounds both, and says
 * on stderr that it lost the server and is trying again).
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
      if (signal.aborted) return 0;
      if (!isTreeError(err, "TREE_UNAVAILABLE") || typeof err.details.resumeFrom !== "number") throw err;
      const { resumeFrom } = err.details;
      const where =
        typeof err.details.socketPath === "string"
          ? "it goes through the folder's next holder, or opens the folder itself when nobody holds it"
          : "once the server answers again";
      throw new CliError(
        "CLI_STORE_UNAVAILABLE",
        `kvspace watch: ${err.message}; the watch ended.\n` +
          `Every change before revision ${resumeFrom} was printed: to go on without missing one, run kvspace watch ${prefix} --from ${resumeFrom} ` +
          `(${where})`,
        { cause: err },
      );
    } finally {
      clearInterval(keepAlive);
    }
    return 0;
  },
});
