/**
 * Where two runs part: their steps side by side, the first difference found in the order it
 * happened — what the model was asked (a turn's input, the system prompt, the tools sent), what it
 * answered, the calls it made, then each call's result — with a short diff of it. Read from the
 * tree alone (transcript.ts); call ids (the provider's) and timings are not compared.
 * `kvspace runs diff` and `GET /v1/agent/runs/<a>/diff/<b>` answer it.
 */
import { runDirs } from "../../shared/keys.js";
import type { Tree } from "../../tree/types.js";
import { argsOf, oneLine, sameJson, textDiff, toolsDiff } from "./compare.js";
import { at } from "./state.js";
import {
  promptAt,
  type RecordedStep,
  type RunTranscript,
  readTranscript,
  recordedEnd,
} from "./transcript.js";
import type { Divergence } from "./types.js";

export interface RunDiff {
  a: string;
  b: string;
  /** Every step, call and result equal, and the runs ended alike. */
  identical: boolean;
  steps: { a: number; b: number };
  calls: { a: number; b: number };
  /** The first difference; its step numbers are the same in both runs (they agree up to it). */
  divergence?: Divergence & { records?: { a?: string; b?: string } };
}

/** Reads both runs (AGENT_RUN_NOT_FOUND names a missing one) and compares them. */
export async function diffRunsIn(tree: Tree, a: string, b: string): Promise<RunDiff> {
  const [ta, tb] = await Promise.all([readTranscript(tree, a), readTranscript(tree, b)]);
  return diffRuns(ta, tb);
}

export function diffRuns(ta: RunTranscript, tb: RunTranscript): RunDiff {
  const sa = ta.turns.flatMap((t) => t.steps);
  const sb = tb.turns.flatMap((t) => t.steps);
  const count = (steps: RecordedStep[]) => steps.reduce((n, s) => n + s.calls.length, 0);
  const base = {
    a: ta.vid,
    b: tb.vid,
    steps: { a: sa.length, b: sb.length },
    calls: { a: count(sa), b: count(sb) },
  };
  const labels: [string, string] = [ta.vid, tb.vid];
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const d = compareStep(ta, tb, sa[i] as RecordedStep, sb[i] as RecordedStep, labels);
    if (d) return { ...base, identical: false, divergence: d };
  }
  const end = compareEnds(ta, tb, sa, sb, labels);
  return end ? { ...base, identical: false, divergence: end } : { ...base, identical: true };
}

type Found = NonNullable<RunDiff["divergence"]>;

function compareStep(
  ta: RunTranscript,
  tb: RunTranscript,
  a: RecordedStep,
  b: RecordedStep,
  labels: [string, string],
): Found | undefined {
  const where = at(a);
  // what the model was asked: a turn's input, then the system text and tools where both runs kept them
  const newA = a.turnStep === 1;
  const newB = b.turnStep === 1;
  if (newA !== newB)
    return {
      kind: "prompt",
      ...where,
      summary: `a new turn starts here in ${newA ? labels[0] : labels[1]} (“${oneLine(newA ? inputOf(ta, a) : inputOf(tb, b))}”); the other run goes on with its turn`,
      diff: [],
    };
  if (newA && inputOf(ta, a) !== inputOf(tb, b))
    return {
      kind: "prompt",
      ...where,
      summary: "the turn's input differs",
      diff: textDiff(inputOf(ta, a), inputOf(tb, b), labels),
    };
  const pa = a.answer.step;
  const pb = b.answer.step;
  if (pa && pb && pa.prompt !== pb.prompt) {
    const was = promptAt(ta, a);
    const now = promptAt(tb, b);
    // the previous turn's failed calls are named by record key, which holds the run's id
    const sysA = was.system === undefined ? undefined : ownIdsOut(was.system, ta.vid);
    const sysB = now.system === undefined ? undefined : ownIdsOut(now.system, tb.vid);
    const tools = was.tools && now.tools ? toolsDiff(was.tools, now.tools, labels) : undefined;
    if (sysA === undefined || sysB === undefined || sysA !== sysB || tools === undefined || tools.length > 0)
      return {
        kind: "prompt",
        ...where,
        summary: "the system prompt or the tools sent differ",
        diff: [
          ...(sysA !== undefined && sysB !== undefined && sysA !== sysB ? textDiff(sysA, sysB, labels) : []),
          ...(tools ?? []),
        ],
      };
  }
  // what the model answered
  if (a.answer.text !== b.answer.text)
    return {
      kind: "answer",
      ...where,
      summary: "the model's text differs",
      diff: textDiff(a.answer.text, b.answer.text, labels),
    };
  if (pa && pb && pa.stop !== pb.stop)
    return {
      kind: "answer",
      ...where,
      summary: `the model stopped for another reason (${pa.stop} in ${labels[0]}, ${pb.stop} in ${labels[1]})`,
      diff: [],
    };
  // the calls it made, all written before any ran
  const calls = Math.max(a.calls.length, b.calls.length);
  for (let i = 0; i < calls; i++) {
    const ca = a.calls[i];
    const cb = b.calls[i];
    if (ca && cb && ca.name === cb.name && sameJson(argsOf(ca.argsText), argsOf(cb.argsText))) continue;
    const name = (ca ?? cb)?.name ?? "";
    return {
      kind: "call",
      ...at(a, { index: i + 1, name }),
      summary:
        ca && cb
          ? `the model called ${ca.name === cb.name ? `${ca.name} with other arguments` : `${ca.name} in ${labels[0]}, ${cb.name} in ${labels[1]}`}`
          : `${ca ? labels[0] : labels[1]} made ${Math.max(a.calls.length, b.calls.length)} calls at this step, ${ca ? labels[1] : labels[0]} ${Math.min(a.calls.length, b.calls.length)}`,
      diff: [
        ...(ca ? [`- ${labels[0]}: ${ca.name} ${oneLine(argsOf(ca.argsText))}`] : []),
        ...(cb ? [`+ ${labels[1]}: ${cb.name} ${oneLine(argsOf(cb.argsText))}`] : []),
      ],
      ...records(ca?.record?.key, cb?.record?.key),
    };
  }
  // each call's result, as the model got it
  for (const [i, ca] of a.calls.entries()) {
    const cb = b.calls[i];
    const ra = ca.result;
    const rb = cb?.result;
    const kindA = ca.record?.value.kind;
    const kindB = cb?.record?.value.kind;
    if (ra?.content === rb?.content && ra?.isError === rb?.isError && kindA === kindB) continue;
    const kinds =
      kindA !== kindB
        ? ` (${kindA ?? "no record"} in ${labels[0]}, ${kindB ?? "no record"} in ${labels[1]})`
        : "";
    return {
      kind: "result",
      ...at(a, { index: i + 1, name: ca.name }),
      summary: `${ca.name} answered otherwise${kinds}`,
      diff: textDiff(ra?.content ?? "(no result)", rb?.content ?? "(no result)", labels),
      ...records(ca.record?.key, cb?.record?.key),
    };
  }
  return undefined;
}

/** Both runs agree on every step they share: one went on, or they ended otherwise. */
function compareEnds(
  ta: RunTranscript,
  tb: RunTranscript,
  sa: RecordedStep[],
  sb: RecordedStep[],
  labels: [string, string],
): Found | undefined {
  const ea = recordedEnd(ta);
  const eb = recordedEnd(tb);
  const shorter = sa.length <= sb.length ? sa : sb;
  const last = shorter[shorter.length - 1];
  if (sa.length !== sb.length) {
    const longer = sa.length > sb.length ? 0 : 1;
    const next = (longer === 0 ? sa : sb)[shorter.length] as RecordedStep;
    return {
      kind: "end",
      ...(last ? at(last) : at(next)),
      summary: `${labels[1 - longer]} ended after step ${shorter.length} (${(longer === 0 ? eb : ea)?.reason ?? "no reason recorded"}); ${labels[longer]} went on to step ${next.index}${next.turnStep === 1 ? ` with a new turn (“${oneLine(inputOf(longer === 0 ? ta : tb, next))}”)` : ""}`,
      diff: [],
    };
  }
  if (last && ea && eb && (ea.reason !== eb.reason || ea.text !== eb.text))
    return {
      kind: "end",
      ...at(last),
      summary: `the runs ended otherwise: ${ea.reason} in ${labels[0]}, ${eb.reason} in ${labels[1]}`,
      diff: ea.text !== eb.text ? textDiff(ea.text, eb.text, labels) : [],
    };
  return undefined;
}

function inputOf(t: RunTranscript, step: RecordedStep): string {
  return t.turns[step.turn]?.input ?? "";
}

/** A system text with the run's own record keys made run-neutral. */
function ownIdsOut(text: string, vid: string): string {
  return text.replaceAll(runDirs.records(vid), runDirs.records("<vid>"));
}

function records(a: string | undefined, b: string | undefined): { records?: { a?: string; b?: string } } {
  if (a === undefined && b === undefined) return {};
  return { records: { ...(a ? { a } : {}), ...(b ? { b } : {}) } };
}
