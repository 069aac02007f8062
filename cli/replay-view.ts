/**
 * What `byteseek run --replay` says after the turns it re-drew (on stderr): what changed in the
 * world since the run (notes), and either that the replay matched its record or where it parted.
 * The same wording serves `kvspace runs diff` for a divergence.
 */
import type { Divergence, ReplayReport } from "../agent/replay/types.js";
import { printable } from "../tools/catalogue/printable.js";

const KIND: Record<Divergence["kind"], string> = {
  prompt: "what the model was asked",
  answer: "the model's answer",
  call: "the tool call",
  result: "the tool result",
  end: "how the turn ended",
};

/** `step 3 (turn 1), call 1 edit.replace (/byteseek/tool/r1/4)` */
export function divergenceWhere(d: Divergence): string {
  const call = d.call ? `, call ${d.call}${d.tool ? ` ${d.tool}` : ""}` : "";
  return `step ${d.step} (turn ${d.turn}, step ${d.turnStep})${call}${d.record ? ` (${d.record})` : ""}`;
}

/** The divergence as lines: where, which kind, the one-sentence summary, and the diff indented. */
export function divergenceLines(d: Divergence): string[] {
  return [
    `${divergenceWhere(d)}: ${KIND[d.kind]} differs`,
    `  ${d.summary}`,
    ...d.diff.map((l) => `    ${l}`),
  ];
}

/** Every line neutralised: the texts come from the tree (tool output, prompts). */
export function replayReportLines(r: ReplayReport): string[] {
  return reportLines(r).map((l) => printable(l));
}

function reportLines(r: ReplayReport): string[] {
  const lines: string[] = [];
  for (const n of r.notes) {
    lines.push(`note: ${n.step !== undefined ? `step ${n.step}: ` : ""}${n.text}`);
    for (const l of n.diff ?? []) lines.push(`    ${l}`);
  }
  const ran = `${r.executed} tool call${r.executed === 1 ? "" : "s"} run, ${r.modelRequests} model requests`;
  const size = `${r.turns} turn${r.turns === 1 ? "" : "s"}, ${r.steps} step${r.steps === 1 ? "" : "s"}, ${r.calls} call${r.calls === 1 ? "" : "s"}`;
  if (!r.divergence) lines.push(`replay of ${r.vid}: as recorded (${size}; ${ran})`);
  else {
    const [head, ...rest] = divergenceLines(r.divergence);
    lines.push(`replay of ${r.vid} diverges at ${head}`, ...rest, `(${ran}; the replay stopped there)`);
  }
  return lines;
}
