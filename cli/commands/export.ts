import { maskExportEntry } from "../../tools/mcp/secret-fields.js";
import { parseDirKey } from "../../tree/path.js";
import { defineCommand, writeLine } from "../command.js";
import { CliError } from "../errors.js";
import { formatExportLine } from "../format.js";

/**
 * `kvspace export [<dir/>] [--secrets]` → NDJSON on stdout, one entry a line (the whole store by
 * default). A registry entry's secret fields (SECRET_FIELDS) are masked unless `--secrets` says to
 * write them: an export is a file that travels.
 */
export const exportCommand = defineCommand({
  name: "export",
  usage: "export [<dir/>] [--secrets]",
  summary: "write the store or a directory as NDJSON to stdout",
  help: "Prints one {key, kind, value, ro, …} a line, the form import reads; -o ndjson says so (the same output).",
  args: { min: 0, max: 1 },
  // its lines are NDJSON already: -o ndjson says so in a script that passes -o everywhere
  outputs: ["ndjson"],
  flags: { secrets: "bool" },
  async run({ positionals: [dir], flags }, { tree, stdout, signal }) {
    const entries = dir === undefined ? tree.export() : tree.export(parseDirKey(dir).key);
    const whole = flags.secrets === true;
    for await (const entry of entries) {
      if (signal.aborted) throw new CliError("CLI_INTERRUPTED", "export interrupted", { exitCode: 130 });
      await writeLine(stdout, formatExportLine(whole ? entry : maskExportEntry(entry)));
    }
    return 0;
  },
});
