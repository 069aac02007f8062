/**
 * The runs at a glance (the web page's overview, `GET /v1/overview`): how many runs are in each
 * status, and the ones a person looks at first — every running and interrupted run, then the
 * latest failed and done ones — with their summaries (agent/runs.ts).
 */
import { dirs } from "../shared/keys.js";
import { childrenOf } from "../tree/children.js";
import type { Tree } from "../tree/types.js";
import { RUN_STATUSES, type RunStatus, type RunSummary, type RunsOverview } from "./run-schemas.js";
import { statusOf, summary } from "./runs.js";

/** How many runs of each status `shown` takes at most (newest first). */
const SHOWN: Record<RunStatus, number> = { running: 20, interrupted: 20, failed: 5, done: 5, session: 0 };

/** Counts the runs under /vthread/ by status and summarises the ones worth a look. */
export async function runsOverview(tree: Tree): Promise<RunsOverview> {
  const counts = { running: 0, interrupted: 0, done: 0, failed: 0 };
  // per status, the last runs in name order (generated run ids grow with time)
  const latest = new Map<RunStatus, Array<{ vid: string; state: { status: RunStatus; detail?: string } }>>(
    RUN_STATUSES.map((s) => [s, []]),
  );
  for await (const child of childrenOf(tree, dirs.runs, 500)) {
    if (!child.name.endsWith("/")) continue;
    const vid = child.name.slice(0, -1);
    const state = await statusOf(tree, vid);
    // an MCP host's session has no turn loop: nothing to run, resume or fail
    if (!state || state.status === "session") continue;
    counts[state.status]++;
    const list = latest.get(state.status) ?? [];
    list.push({ vid, state });
    if (list.length > SHOWN[state.status]) list.shift();
  }
  const shown: RunSummary[] = [];
  for (const status of ["running", "interrupted", "failed", "done"] as const) {
    const runs = await Promise.all((latest.get(status) ?? []).map((r) => summary(tree, r.vid, r.state)));
    shown.push(...runs.sort((a, b) => b.started - a.started || b.vid.localeCompare(a.vid)));
  }
  return { counts, shown };
}
