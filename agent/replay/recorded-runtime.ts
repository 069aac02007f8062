/**
 * The tool side of a replay: a Runtime whose `call` answers from the run's records — nothing
 * executes — or, live, runs the call again through a real runtime (the usual gate) and compares.
 * Each call is matched to the run's next record (the records are numbered as the run numbered
 * them: the replay's own go to the scratch tree in the same order); a call other than the
 * recorded one, or a result other than what the model was sent, is the divergence that stops the
 * loop. A declaration changed since the run (its pinned hash against the tree's) is noted.
 */

import { APPROVED_WITH_CALL } from "../../tools/call/call-pipeline.js";
import { hashOf } from "../../tools/catalogue/hash.js";
import { docs } from "../../tools/doc/docs.js";
import { docValue, readDoc } from "../../tools/doc/read-write.js";
import { pendingOf } from "../../tools/gate/approval-flow.js";
import { recordsDir } from "../../tools/records/records.js";
import type { Runtime } from "../../tools/runtime.js";
import type { ToolResult } from "../../tools/types.js";
import type { Tree } from "../../tree/types.js";
import { argsOf, oneLine, sameJson, textDiff } from "./compare.js";
import { at, type PairedRecord, type ReplayState } from "./state.js";
import { ReplayRecordDoc } from "./transcript.js";

/**
 * A declaration's hash, memoised on the value object: the tree's node cache answers the same
 * object while the declaration holds, and a bench replays one run many times.
 */
const declarationHashes = new WeakMap<object, string>();

function declarationHash(value: unknown): string {
  if (typeof value !== "object" || value === null) return hashOf(value);
  let hash = declarationHashes.get(value);
  if (hash === undefined) {
    hash = hashOf(value);
    declarationHashes.set(value, hash);
  }
  return hash;
}

export interface RecordedRuntimeOptions {
  state: ReplayState;
  /** The real tree: declarations are read from it. */
  tree: Tree;
  /** Where the replay's records go (the scratch tree): their count numbers the next call. */
  scratch: Tree;
  /** The prompt's catalogue; with `live`, also what runs each call. */
  base: Runtime;
  live: boolean;
}

/**
 * Copies into the scratch tree the run's records no call of its session answers (a call another
 * caller made under the run's id, a started record a resume replaced), at their own keys: so each
 * record the replay makes lands on the number the run gave it (an append skips taken numbers), and
 * the replay shows, and its prompts name, the run's record keys. Before the loop starts.
 */
export async function copyUnpaired(state: ReplayState, scratch: Tree): Promise<void> {
  const paired = new Set(state.byRecord.map((p) => p.call.record?.key));
  const vid = state.transcript.vid;
  for (const r of state.transcript.records) {
    if (paired.has(r.key)) continue;
    await scratch.set(r.key, docValue(ReplayRecordDoc, r.value), { vid, ro: true });
    state.unpaired++;
  }
}

/** The approval keys of the questions an upstream asked during a call (its record's `details.asked`). */
function questionsAsked(details: Record<string, unknown> | undefined): string[] {
  const asked = details?.asked;
  if (!Array.isArray(asked)) return [];
  return asked.flatMap((a: unknown) => {
    const approval = (a as { approval?: unknown } | null)?.approval;
    return typeof approval === "string" ? [approval] : [];
  });
}

export function createRecordedRuntime(options: RecordedRuntimeOptions): Runtime {
  const { state, tree, scratch, base, live } = options;
  const vid = state.transcript.vid;
  const dir = recordsDir(vid);
  /** The pins checked: a declaration and a hash a record pinned it at. */
  const checked = new Set<string>();

  /** Notes, once per pin, a declaration whose stored value no longer has the hash a record pinned. */
  async function checkDeclaration(paired: PairedRecord): Promise<void> {
    const decl = paired.call.record?.value.decl;
    if (!decl || checked.has(`${decl.key}\n${decl.hash}`)) return;
    checked.add(`${decl.key}\n${decl.hash}`);
    const node = await tree.get(decl.key);
    const now = node && node.kind === "json" ? declarationHash(node.value.value) : undefined;
    if (now === decl.hash) return;
    state.notes.push({
      kind: "declaration",
      step: paired.step.index,
      text: `${paired.call.name}: its declaration at ${decl.key} ${now === undefined ? "was removed" : "changed"} since the run (pinned sha256 ${decl.hash.slice(0, 12)}…${now === undefined ? "" : `, now ${now.slice(0, 12)}…`})`,
    });
  }

  /**
   * A call that waited for a person tells the loop so again, from the approval entry its record
   * names — unless its caller approved it with the call itself (then nobody was told).
   */
  async function tellApproval(key: string | undefined, callOptions: Parameters<Runtime["call"]>[2]) {
    if (key === undefined || !callOptions?.onApproval) return;
    const entry = await readDoc(tree, docs.approval, key).catch(() => undefined);
    if (!entry || entry.decision?.reason === APPROVED_WITH_CALL) return;
    callOptions.onApproval(pendingOf(key, entry));
  }

  function notRun(name: string): ToolResult {
    return {
      kind: "runtime",
      isError: true,
      text: `${name} was not run: the replay stopped where the run diverged from its record`,
      details: { code: "aborted" },
    };
  }

  async function call(name: string, args: unknown, callOptions: Parameters<Runtime["call"]>[2]) {
    if (state.divergence) return notRun(name);
    const node = await scratch.get(dir);
    // the scratch holds the run's other records from the start (copyUnpaired): the rest are the replay's
    const n = (node?.kind === "index" ? node.count : 0) - state.unpaired;
    const paired = state.byRecord[n];
    const step = state.current();
    const record = paired?.call.record;
    if (!step) return notRun(name);
    const where = (p: PairedRecord | undefined) =>
      at(step, { index: p?.callIndex ?? 0, name, ...(record ? { record: record.key } : {}) });
    if (!paired || !record || paired.step !== step) {
      state.diverge({
        kind: "call",
        ...where(paired),
        summary: `the loop called ${name} at step ${step.index}, where the run recorded ${paired ? `record ${record?.key} at step ${paired.step.index}` : "no further call"}`,
        diff: [],
      });
      return notRun(name);
    }
    if (record.value.name !== name || !sameJson(record.value.args, argsOf(JSON.stringify(args ?? {})))) {
      state.diverge({
        kind: "call",
        ...where(paired),
        summary: `the model's call differs from record ${record.key}`,
        diff: [
          `- recorded: ${record.value.name} ${oneLine(record.value.args)}`,
          `+ replayed: ${name} ${oneLine(args)}`,
        ],
      });
      return notRun(name);
    }
    await checkDeclaration(paired);
    const sent = paired.call.result;
    const r = record.value;
    if (live) {
      state.executed++;
      const result = await base.call(name, args, callOptions);
      if (sent && (result.text !== sent.content || (r.kind !== undefined && result.kind !== r.kind)))
        state.diverge({
          kind: "result",
          ...where(paired),
          summary: `${name} answered otherwise than recorded${result.kind !== r.kind ? ` (${r.kind} then, ${result.kind} now)` : ""}`,
          diff: textDiff(sent.content, result.text, ["recorded result", "result now"]),
        });
      return result;
    }
    if (r.text === undefined || r.kind === undefined) {
      state.diverge({
        kind: "result",
        ...where(paired),
        summary: `record ${record.key} holds no result (state ${r.state ?? "unknown"}): the call never finished`,
        diff: [],
      });
      return notRun(name);
    }
    await tellApproval(r.approval, callOptions);
    // then the questions its upstream MCP server asked the person during it, as the run showed them
    for (const key of questionsAsked(r.details)) await tellApproval(key, callOptions);
    const key = (await scratch.append(dir, docValue(ReplayRecordDoc, r), { vid, ro: true })).key;
    const result: ToolResult = {
      kind: r.kind as ToolResult["kind"],
      isError: r.isError ?? r.kind !== "ok",
      text: r.text,
      details: r.details ?? {},
      record: key,
      ...(r.terminate ? { terminate: true } : {}),
    };
    if (sent && (sent.content !== r.text || sent.isError !== result.isError))
      state.diverge({
        kind: "result",
        ...where(paired),
        summary: `record ${record.key} differs from the result the model was sent`,
        diff: textDiff(sent.content, r.text, ["sent to the model", "record"]),
      });
    return result;
  }

  return { ...base, call, close: async () => {} };
}
