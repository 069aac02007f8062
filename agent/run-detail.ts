/**
 * One run as its page shows it (`GET /v1/agent/runs/<vid>`): the listing's summary, and what the
 * model was (the step records of its answers say), how the last turn ended, the call in progress
 * or the approval it waits for, the powers the policy grants it, and — for a saved replay — the
 * run it replays.
 */
import { keys } from "../shared/keys.js";
import { createPolicyReader } from "../tools/gate/policy.js";
import { grantOf } from "../tools/gate/powers.js";
import { recordsDir } from "../tools/records/records.js";
import type { Tree, TreeNode } from "../tree/types.js";
import { AgentError } from "./errors.js";
import { reasonKey, sessionDir } from "./run-keys.js";
import { ReplayOf, type RunDetail } from "./run-schemas.js";
import { statusOf, summary as summaryOf } from "./runs.js";

/** `/vthread/<vid>/replay`: the run a saved replay re-drove, and how it went. */
export const replayKey = keys.runReplay;

const text = (node: TreeNode | undefined): string | undefined =>
  node && node.kind !== "index" && node.kind !== "json" ? String(node.value.value) : undefined;

/** How far back from the session's end the model's name is looked for. */
const MODEL_LOOKBACK = 20;

/** Run `vid` in detail; AGENT_RUN_NOT_FOUND when the tree has no such run. */
export async function runDetail(tree: Tree, vid: string): Promise<RunDetail> {
  const state = await statusOf(tree, vid);
  if (!state)
    throw new AgentError(
      "AGENT_RUN_NOT_FOUND",
      `there is no run ${vid}: /vthread/${vid}/ has no status (GET /v1/agent/runs lists the runs)`,
      { vid },
    );
  const [summary, dir, reason, records, replay, loaded] = await Promise.all([
    summaryOf(tree, vid, state),
    tree.get(sessionDir(vid)),
    tree.get(reasonKey(vid)),
    tree.get(recordsDir(vid)),
    tree.get(replayKey(vid)),
    createPolicyReader(tree)(),
  ]);
  const messages = dir?.kind === "index" ? dir.count : 0;
  const model = await modelOf(tree, vid, messages);
  const replayOf = ReplayOf.safeParse(replay?.kind === "json" ? replay.value.value : undefined);
  const why = text(reason);
  const waiting = state.detail?.startsWith("waiting ") ? state.detail.slice(8) : undefined;
  const running = state.status === "running" || waiting !== undefined;
  const inProgress =
    running && records?.kind === "index" ? await progressOf(tree, vid, records.count) : undefined;
  const grant = loaded.ok ? grantOf(loaded.policy.grants, vid) : undefined;
  return {
    ...summary,
    ...(model ? { model } : {}),
    ...(why ? { reason: why } : {}),
    messages,
    ...(waiting ? { waiting } : {}),
    ...(inProgress ? { inProgress } : {}),
    ...(grant ? { grant: { rule: grant.rule, powers: grant.grant } } : {}),
    ...(replayOf.success ? { replayOf: replayOf.data } : {}),
  };
}

/** The model the last step record names (the session is dense: `<n>` from 0). */
async function modelOf(tree: Tree, vid: string, count: number): Promise<string | undefined> {
  for (let n = count - 1; n >= Math.max(0, count - MODEL_LOOKBACK); n--) {
    const node = await tree.get(`${sessionDir(vid)}${n}`);
    const m =
      node?.kind === "json" ? (node.value.value as { role?: unknown; step?: { model?: unknown } }) : {};
    if (m?.role === "assistant" && typeof m.step?.model === "string") return m.step.model;
  }
  return undefined;
}

/** The call in progress: the run's last record while it is `started` (its intent is in, its result not yet). */
async function progressOf(tree: Tree, vid: string, count: number): Promise<string | undefined> {
  if (count === 0) return undefined;
  const key = `${recordsDir(vid)}${count - 1}`;
  const node = await tree.get(key);
  const state = node?.kind === "json" ? (node.value.value as { state?: unknown } | null)?.state : undefined;
  return state === "started" ? key : undefined;
}
