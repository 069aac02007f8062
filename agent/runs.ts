/**
 * Runs as a listing (`kvspace runs`, `GET /v1/agent/runs`, the web page): every run under
 * `/vthread/`, with its status — `running` only while a live process holds its lease, else
 * `interrupted` — when it started, its steps, calls and tokens. And the sweep a server makes at
 * start: runs left `running` by a process that is gone are marked `interrupted`.
 */
import { usageKey } from "../tools/usage.js";
import type { Tree, TreeNode } from "../tree/types.js";
import { str } from "../tree/value.js";
import { type Leases, runHeld } from "./lease.js";
import { reasonKey, sessionDir, statusKey } from "./loop.js";
import type { RunStatus, RunSummary, RunsListing } from "./run-schemas.js";

export { RUN_STATUSES, type RunStatus, RunSummary, RunsListing } from "./run-schemas.js";

const text = (node: TreeNode | undefined): string | undefined =>
  node && node.kind !== "index" && node.kind !== "json" ? String(node.value.value) : undefined;

function asObject(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** The run's status as a listing shows it: a stored `running`/`waiting …` whose lease is gone is `interrupted`. */
export async function statusOf(
  tree: Tree,
  vid: string,
): Promise<{ status: RunStatus; detail?: string } | undefined> {
  const stored = text(await tree.get(statusKey(vid)));
  if (stored === undefined) return undefined;
  if (stored === "done" || stored === "failed" || stored === "interrupted") return { status: stored };
  const leased = await runHeld(tree, vid);
  const detail = stored === "running" ? {} : { detail: stored };
  return { status: leased ? "running" : "interrupted", ...detail };
}

export interface ListRunsOptions {
  status?: RunStatus;
  /** At most this many runs (default 100). */
  limit?: number;
  after?: string;
}

/** The runs under /vthread/, in name order, filtered by status. */
export async function listRuns(tree: Tree, options: ListRunsOptions = {}): Promise<RunsListing> {
  const limit = options.limit ?? 100;
  const runs: RunSummary[] = [];
  let after = options.after;
  for (;;) {
    const page = await tree.list("/vthread/", { limit: 200, values: false, ...(after ? { after } : {}) });
    for (const child of page.children) {
      if (!child.name.endsWith("/")) continue;
      after = child.name;
      const vid = child.name.slice(0, -1);
      const state = await statusOf(tree, vid);
      if (!state || (options.status && state.status !== options.status)) continue;
      runs.push(await summary(tree, vid, state));
      if (runs.length >= limit) return { runs, next: after };
    }
    if (!page.next) return { runs };
    after = page.next;
  }
}

export async function summary(
  tree: Tree,
  vid: string,
  state: { status: RunStatus; detail?: string },
): Promise<RunSummary> {
  const [usage, first] = await Promise.all([tree.get(usageKey(vid)), tree.get(`${sessionDir(vid)}0`)]);
  const u = asObject(usage?.kind === "json" ? usage.value.value : undefined);
  const tokens = asObject(u.tokens);
  return {
    vid,
    ...state,
    started: first?.mtime ?? 0,
    steps: num(u.steps),
    calls: num(u.calls),
    tokens: { input: num(tokens.input), output: num(tokens.output) },
    ...(state.status === "interrupted" ? { resume: `byteseek run --resume ${vid}` } : {}),
  };
}

/**
 * At a server's start: every run whose stored status says it runs (`running`, `waiting …`) and
 * whose lease no live process holds is marked `interrupted`, with the reason saying how to resume
 * it. Answers the runs marked.
 */
export async function markInterrupted(tree: Tree, leases?: Pick<Leases, "held">): Promise<string[]> {
  const marked: string[] = [];
  let after: string | undefined;
  do {
    const page = await tree.list("/vthread/", { limit: 500, values: false, ...(after ? { after } : {}) });
    for (const child of page.children) {
      if (!child.name.endsWith("/")) continue;
      const vid = child.name.slice(0, -1);
      const stored = text(await tree.get(statusKey(vid)));
      if (stored !== "running" && !stored?.startsWith("waiting ")) continue;
      const live = leases ? await leases.held(vid) : await runHeld(tree, vid);
      if (live) continue;
      await tree.set(
        reasonKey(vid),
        str(`interrupted: the process running it stopped; resume it with byteseek run --resume ${vid}`),
        { vid },
      );
      await tree.set(statusKey(vid), str("interrupted"), { vid });
      marked.push(vid);
    }
    after = page.next;
  } while (after);
  return marked;
}
