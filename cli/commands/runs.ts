import { diffRunsIn } from "../../agent/replay/diff.js";
import { listRuns, RUN_STATUSES, type RunStatus } from "../../agent/runs.js";
import { printable } from "../../tools/catalogue/printable.js";
import type { CommandContext } from "../command.js";
import { defineCommand, writeJson, writeLine } from "../command.js";
import { CliError } from "../errors.js";
import { divergenceLines } from "../replay-view.js";

const USAGE = "runs [--status interrupted|running|done|failed|session] | runs diff <vidA> <vidB>";

/**
 * `kvspace runs [--status S]`: the runs in the tree, one line each —
 * `vid<TAB>started<TAB>steps<TAB>calls<TAB>tokens<TAB>status` (started in ISO 8601, tokens as
 * input+output) — and, on stderr, the command that resumes each interrupted one (a run whose
 * stored status says it runs but whose process is gone, no live lease, is `interrupted`).
 *
 * `kvspace runs diff <vidA> <vidB>`: the first step where two runs part — what the model was asked
 * (a turn's input, the system prompt, the tools sent), its answer, a tool call, or a call's result —
 * and a short diff of it; read from the tree (embedded, etcd, or a server's). Exit 0 when the runs
 * are the same step for step, 1 when they differ (or on an error, said on stderr).
 */
export const runsCommand = defineCommand({
  name: "runs",
  usage: USAGE,
  summary: "list the runs (status, start, steps, calls, tokens), or diff two",
  help: [
    "kvspace runs [--status S] prints vid<TAB>started<TAB>steps<TAB>calls<TAB>tokens<TAB>status per run",
    "(tokens: input+output); a run whose process died is interrupted: byteseek run --resume <vid> continues it.",
    "kvspace runs diff <vidA> <vidB> prints the first step where the runs diverge and a short diff:",
    "  runs r1 and r2 diverge at step 3 (turn 1, step 3), call 1 edit.replace: the tool result differs",
    "Steps are model answers, counted over the whole run. Call ids and timings are not compared.",
    "Exit 0 when the runs are the same, 1 when they differ (or on an error).",
    "-o json: the listing as {runs: [{vid, status, started, steps, calls, tokens: {input, output}, …}]} (every",
    "page of GET /v1/agent/runs); the diff as GET /v1/agent/runs/<a>/diff/<b> answers {a, b, identical, steps,",
    "calls, divergence?}. -o ndjson (the listing): one run a line.",
  ].join("\n"),
  outputs: ["json", "ndjson"],
  flagHelp: {
    status: "only runs with this status: interrupted, running, done, failed or session (an MCP host's)",
  },
  args: { min: 0, max: 3 },
  flags: { status: "value" },
  async run({ positionals: [action, a, b], flags }, ctx) {
    if (action === undefined) return list(flags.status, ctx);
    if (action !== "diff") throw usage(`unknown action '${action}'`);
    if (a === undefined || b === undefined) throw usage("runs diff takes two run ids");
    return diff(a, b, ctx);
  },
});

async function list(
  status: string | boolean | string[] | undefined,
  { tree, stdout, stderr, output = "text" }: CommandContext,
): Promise<number> {
  if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus))
    throw usage(`--status takes ${RUN_STATUSES.join(", ")}, got '${String(status)}'`);
  let after: string | undefined;
  const interrupted: string[] = [];
  const all: unknown[] = [];
  do {
    const page = await listRuns(tree, {
      limit: 500,
      ...(typeof status === "string" ? { status: status as RunStatus } : {}),
      ...(after ? { after } : {}),
    });
    for (const r of page.runs) {
      if (r.resume) interrupted.push(r.resume);
      if (output === "json") all.push(r);
      if (output === "ndjson") await writeJson(stdout, r);
      if (output !== "text") continue;
      const started = r.started > 0 ? new Date(r.started).toISOString() : "-";
      const tokens = `${r.tokens.input}+${r.tokens.output}`;
      await writeLine(stdout, [printable(r.vid), started, r.steps, r.calls, tokens, r.status].join("\t"));
    }
    after = page.next;
  } while (after);
  if (output === "json") await writeJson(stdout, { runs: all });
  for (const command of interrupted) await writeLine(stderr, `resume: ${printable(command)}`);
  return 0;
}

async function diff(
  a: string,
  b: string,
  { tree, stdout, output = "text" }: CommandContext,
): Promise<number> {
  if (output === "ndjson") throw usage("runs diff takes -o json (one document), not ndjson");
  const d = await diffRunsIn(tree, a, b);
  if (output === "json") {
    await writeJson(stdout, d);
    return d.divergence ? 1 : 0;
  }
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
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function usage(message: string): CliError {
  return new CliError("CLI_USAGE", `kvspace runs: ${message}\nusage: kvspace ${USAGE}`);
}
