/**
 * A replay kept as a run of its own (`POST /v1/agent/runs/<vid>/replay`, the web page's Replay):
 * the replay runs as `byteseek run --replay` does (no model request; no tool executes unless
 * `live`), then what it made under the run's keys — its session, records, usage and status — is
 * written to the tree under a new id, `<vid>.replay-<n>`, in one import, with
 * `/vthread/<new>/replay` naming the run it replays. So it lists, opens and compares like any run.
 */

import type { Logger } from "pino";
import { dirs, runDirs, runFamilies } from "../../shared/keys.js";
import { usageKey } from "../../tools/records/usage.js";
import { isRunId } from "../../tools/run-id.js";
import type { Runtime } from "../../tools/runtime.js";
import type { ExportEntry, Tree } from "../../tree/types.js";
import { json } from "../../tree/value.js";
import { replayKey } from "../run-detail.js";
import type { ReplayOf } from "../run-schemas.js";
import { type LiveRuntime, replayRun } from "./replay.js";
import type { ReplayReport } from "./types.js";

/** Where the replays of each run are counted (a system entry: listings skip it). */
const REPLAYS_DIR = dirs.replays;

export interface SavedReplay {
  /** The replay's own run. */
  vid: string;
  report: Omit<ReplayReport, "results">;
}

export interface SaveReplayOptions {
  tree: Tree;
  runtime: Runtime;
  logger: Logger;
  vid: string;
  live?: LiveRuntime;
}

export async function replayAndSave(options: SaveReplayOptions): Promise<SavedReplay> {
  const { tree, vid } = options;
  let entries: ExportEntry[] = [];
  const report = await replayRun({
    tree,
    runtime: options.runtime,
    logger: options.logger,
    vid,
    ...(options.live ? { live: options.live } : {}),
    async keep(scratch) {
      for await (const e of scratch.export("/")) entries.push(e);
    },
  });
  const { results: _results, ...rest } = report;
  const saved = await newVid(tree, vid);
  const rename = renamer(vid, saved);
  entries = entries.flatMap((e) => {
    const key = rename(e.key);
    if (key === undefined) return [];
    const { history: _h, version: _v, ...line } = e;
    // what names the run's records (the last turn's list) names the replay's
    const value =
      e.kind === "json"
        ? JSON.parse(JSON.stringify(e.value).replaceAll(runDirs.records(vid), runDirs.records(saved)))
        : e.value;
    return [
      { ...line, key, ...(value !== undefined ? { value } : {}), ...(e.vid === vid ? { vid: saved } : {}) },
    ];
  });
  const replayOf: ReplayOf = {
    of: vid,
    live: report.live,
    executed: report.executed,
    ...(report.divergence ? { diverged: report.divergence.summary } : {}),
  };
  entries.push({ key: replayKey(saved), kind: "json", value: replayOf, vid: saved });
  await tree.import(entries);
  return { vid: saved, report: rest };
}

/** `<vid>.replay-<n>`, n counted in the tree (two replays at once never share one). */
async function newVid(tree: Tree, vid: string): Promise<string> {
  const { key } = await tree.append(`${REPLAYS_DIR}${vid}/`, json({ ts: Date.now() }));
  const n = Number(key.slice(key.lastIndexOf("/") + 1)) + 1;
  const id = `${vid}.replay-${n}`;
  // a long id leaves no room for the suffix: the replay is named by its count alone
  return isRunId(id) ? id : `replay-${n}-${vid.slice(0, 80)}`;
}

/** The run's own keys (agent/replay/scratch-tree.ts `runOwns`), moved to the replay's id. */
function renamer(from: string, to: string): (key: string) => string | undefined {
  return (key) => {
    if (key === usageKey(from)) return usageKey(to);
    for (const p of runFamilies) {
      if (key === `${p}${from}/` || key.startsWith(`${p}${from}/`))
        return `${p}${to}/${key.slice(p.length + from.length + 1)}`;
    }
    // the directories above the run's keys
    return undefined;
  };
}
