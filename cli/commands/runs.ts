import { listRuns, RUN_STATUSES, type RunStatus } from "../../agent/runs.js";
import { printable } from "../../tools/printable.js";
import { defineCommand, writeLine } from "../command.js";
import { usageError } from "../errors.js";

const USAGE = "runs [--status interrupted|running|done|failed]";

/**
 * `kvspace runs [--status S]`: the runs in the tree, one line each —
 * `vid<TAB>started<TAB>steps<TAB>calls<TAB>tokens<TAB>status` (started in ISO 8601, tokens as
 * input+output) — and, on stderr, the command that resumes each interrupted one. A run whose
 * stored status says it runs but whose process is gone (no live lease) is `interrupted`.
 */
export const runsCommand = defineCommand({
  name: "runs",
  usage: USAGE,
  summary: "list the runs: status, start, steps, calls, tokens",
  help: [
    "Prints vid<TAB>started<TAB>steps<TAB>calls<TAB>tokens<TAB>status per run (tokens: input+output).",
    "A run whose process died is interrupted: byteseek run --resume <vid> continues it.",
  ].join("\n"),
  flagHelp: { status: "only runs with this status: interrupted, running, done or failed" },
  args: { min: 0, max: 0 },
  flags: { status: "value" },
  async run({ flags }, { tree, stdout, stderr }) {
    const status = flags.status;
    if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus))
      throw usageError(USAGE, `--status takes ${RUN_STATUSES.join(", ")}, got '${String(status)}'`);
    let after: string | undefined;
    const interrupted: string[] = [];
    do {
      const page = await listRuns(tree, {
        limit: 500,
        ...(typeof status === "string" ? { status: status as RunStatus } : {}),
        ...(after ? { after } : {}),
      });
      for (const r of page.runs) {
        const started = r.started > 0 ? new Date(r.started).toISOString() : "-";
        const tokens = `${r.tokens.input}+${r.tokens.output}`;
        await writeLine(stdout, [printable(r.vid), started, r.steps, r.calls, tokens, r.status].join("\t"));
        if (r.resume) interrupted.push(r.resume);
      }
      after = page.next;
    } while (after);
    for (const command of interrupted) await writeLine(stderr, `resume: ${printable(command)}`);
    return 0;
  },
});
