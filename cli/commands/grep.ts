import { maskedView } from "../../tools/mcp/masked-view.js";
import { GREP_MAX_LIMIT, type GrepMatch, type GrepOptions, type GrepResult, grep } from "../../tree/grep.js";
import { parseDirKey } from "../../tree/path.js";
import type { Tree } from "../../tree/types.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { usageError } from "../errors.js";

const USAGE = "grep <pattern> [prefix/] [--regex] [--keys] [--ignore-case] [--limit N]";

/** Matches printed when --limit is not given. */
const DEFAULT_LIMIT = 1000;

/** A server's tree searches on the server (one request a page); any other walks the tree here. */
function searcher(tree: Tree): (prefix: string, o: GrepOptions) => Promise<GrepResult> {
  const remote = (tree as { grep?: (prefix: string, o: GrepOptions) => Promise<GrepResult> }).grep;
  if (typeof remote === "function") return (prefix, o) => remote.call(tree, prefix, o);
  return (prefix, o) => grep(tree, prefix, { ...o, view: maskedView });
}

const line = (m: GrepMatch) => (m.line === undefined ? m.key : `${m.key}:${m.line}:${m.preview}`);

/**
 * `kvspace grep <pattern> [prefix/] [--regex] [--keys] [--ignore-case] [--limit N]`: the lines of values (or,
 * with --keys, the keys) below a directory that match, page after page until the limit.
 */
export const grepCommand = defineCommand({
  name: "grep",
  usage: USAGE,
  summary: "search the values (or keys) below a directory",
  help: [
    "Prints key:line:text for each matching line of a value below prefix/ (default /), in key order;",
    "with --keys, each key (path) that matches instead. JSON values are searched as one line, numbers",
    "as written; system entries (‥) are skipped and MCP registry secrets read as ***. Stops after",
    `--limit matches (default ${DEFAULT_LIMIT}; a note on stderr says there are more). Exit 0 whether or not`,
    "anything matched. -o json: {matches: [{key, line?, preview}], next?}; -o ndjson: one match a line.",
    "Against a server (KVSPACE=http…) the server searches, a page a request (GET /v1/grep).",
  ].join("\n"),
  outputs: ["json", "ndjson"],
  args: { min: 1, max: 2 },
  flags: { regex: "bool", keys: "bool", "ignore-case": "bool", limit: "value" },
  flagHelp: {
    regex: "the pattern is a JavaScript regular expression",
    keys: "match keys (paths) instead of values",
    "ignore-case": "ignore case",
    limit: `stop after this many matches (default ${DEFAULT_LIMIT})`,
  },
  async run({ positionals: [pattern, dir], flags }, { tree, stdout, stderr, signal, output = "text" }) {
    const prefix = parseDirKey(dir ?? "/").key;
    const limit = flags.limit === undefined ? DEFAULT_LIMIT : Number(flags.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw usageError(USAGE, `--limit takes a positive integer, got '${String(flags.limit)}'`);
    const search = searcher(tree);
    const all: GrepMatch[] = [];
    let after: string | undefined;
    let left = limit;
    let next: string | undefined;
    do {
      const res = await search(prefix, {
        pattern: pattern!,
        ...(flags.regex === true ? { regex: true } : {}),
        ...(flags["ignore-case"] === true ? { ignoreCase: true } : {}),
        keys: flags.keys === true,
        values: flags.keys !== true,
        limit: Math.min(left, GREP_MAX_LIMIT),
        ...(after ? { after } : {}),
      });
      for (const m of res.matches) {
        if (output === "text") await writeLine(stdout, line(m));
        else if (output === "ndjson") await writeJson(stdout, m);
        else all.push(m);
      }
      left -= res.matches.length;
      next = res.next;
      after = next;
    } while (next !== undefined && left > 0 && !signal.aborted);
    if (output === "json") await writeJson(stdout, { matches: all, ...(next ? { next } : {}) });
    if (next !== undefined && left <= 0)
      await writeLine(
        stderr,
        `kvspace grep: stopped after ${limit} matches; there are more (raise --limit, or narrow the prefix)`,
      );
    return 0;
  },
});
