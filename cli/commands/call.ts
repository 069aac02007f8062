import { defineCommand, writeLine } from "../command.js";
import { CliError } from "../errors.js";

const USAGE = "call <name> [<json args>] [--vid V] [--approve] [--json]";

/** The vid of calls made from the command line without `--vid`. */
export const CLI_VID = "cli";

/**
 * `kvspace call <name> '<json args>'` → one call through the tool boundary (recorded under
 * /byteseek/tool/<vid>/); prints the result text, or with `--json` the result object on one
 * line. Exit 0 for kind ok, 3 for any other kind.
 */
export const callCommand = defineCommand({
  name: "call",
  usage: USAGE,
  summary: "call a tool through the runtime (exit 3 unless ok)",
  help: "-o json is --json: the result object {kind, isError, text, details, record, …} on one line.",
  args: { min: 1, max: 2 },
  outputs: ["json"],
  flags: { vid: "value", approve: "bool", json: "bool" },
  flagHelp: {
    vid: "the run the call is recorded under (default cli)",
    approve: "approve the call if it needs a person's approval (you are that person)",
    json: "print the whole result as JSON",
  },
  async run({ positionals: [name, raw], flags }, { tools, stdout, signal, output }) {
    const args = parseJsonArgs(raw);
    const vid = typeof flags.vid === "string" ? flags.vid : CLI_VID;
    const client = await tools();
    const result = await client.call(name as string, args, {
      vid,
      signal,
      ...(flags.approve === true ? { approve: true } : {}),
    });
    if (flags.json === true || output === "json") await writeLine(stdout, JSON.stringify(result, jsonSafe));
    // Command output (shell tools) usually ends with its own newline: do not add a blank line.
    else await writeLine(stdout, result.text.endsWith("\n") ? result.text.slice(0, -1) : result.text);
    return result.kind === "ok" ? 0 : 3;
  },
});

/** The arguments: one JSON value (absent: `{}`). Anything else is a usage error that says what is wrong. */
function parseJsonArgs(raw: string | undefined): unknown {
  if (raw === undefined) return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw new CliError(
      "CLI_USAGE",
      `invalid JSON arguments ${JSON.stringify(raw)}: ${(err as Error).message}\n` +
        `pass one JSON object, e.g. kvspace call tree.get '{"key":"/a"}'\nusage: kvspace ${USAGE}`,
    );
  }
}

function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
