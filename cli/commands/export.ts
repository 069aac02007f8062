import { parseDirKey } from "../../tree/path.js";
import { defineCommand, writeLine } from "../command.js";
import { CliError } from "../errors.js";
import { formatExportLine } from "../format.js";

/** `kvspace export [<dir/>]` → NDJSON on stdout, one entry a line (the whole store by default). */
export const exportCommand = defineCommand({
  name: "export",
  usage: "export [<dir/>]",
  summary: "write the store or a directory as NDJSON to stdout",
  args: { min: 0, max: 1 },
  async run({ positionals: [dir] }, { tree, stdout, signal }) {
    const entries = dir === undefined ? tree.export() : tree.export(parseDirKey(dir).key);
    for await (const entry of entries) {
      if (signal.aborted) throw new CliError("CLI_INTERRUPTED", "export interrupted", { exitCode: 130 });
      await writeLine(stdout, formatExportLine(entry));
    }
    return 0;
  },
});
