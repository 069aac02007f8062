import { diffRunsIn } from "../../agent/replay/diff.js";
import { printable } from "../../tools/printable.js";
import { defineCommand, writeLine } from "../command.js";
import { CliError } from "../errors.js";
import { divergenceLines } from "../replay-view.js";

const USAGE = "runs diff <vidA> <vidB>";

/**
 * `kvspace runs diff <vidA> <vidB>`: the first step where two runs part — what the model was asked
 * (a turn's input, the system prompt, the tools sent), its answer, a tool call, or a call's result —
 * and a short diff of it; read from the tree (embedded, etcd, or a server's). Exit 0 when the runs
 * are the same step for step, 1 when they differ (or on an error, said on stderr).
 */
export const runsCommand = defineCommand({
  name: "runs",
  usage: USAGE,
  summary: "two runs side by side: the first step where they diverge",
  help: [
    "kvspace runs diff <vidA> <vidB> prints the first step where the runs diverge and a short diff:",
    "  runs r1 and r2 diverge at step 3 (turn 1, step 3), call 1 edit.replace: the tool result differs",
    "Steps are model answers, counted over the whole run. Call ids and timings are not compared.",
    "Exit 0 when the runs are the same, 1 when they differ (or on an error).",
  ].join("\n"),
  args: { min: 1, max: 3 },
  async run({ positionals: [action, a, b] }, { tree, stdout }) {
    if (action !== "diff") throw usage(`unknown action '${action}'`);
    if (a === undefined || b === undefined) throw usage("runs diff takes two run ids");
    const d = await diffRunsIn(tree, a, b);
    if (!d.divergence) {
      await writeLine(
        stdout,
        printable(
          `runs ${a} and ${b} are the same: ${plural(d.steps.a, "step")}, ${plural(d.calls.a, "call")} (every prompt, answer, call and result equal)`,
        ),
      );
      return 0;
    }
    const [head, ...rest] = divergenceLines(d.divergence);
    await writeLine(stdout, printable(`runs ${a} and ${b} diverge at ${head}`));
    const { records } = d.divergence;
    if (records)
      await writeLine(stdout, printable(`  records: ${a} ${records.a ?? "-"} · ${b} ${records.b ?? "-"}`));
    for (const line of rest) await writeLine(stdout, printable(line));
    return 1;
  },
});

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function usage(message: string): CliError {
  return new CliError("CLI_USAGE", `kvspace runs: ${message}\nusage: kvspace ${USAGE}`);
}
