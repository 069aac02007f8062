/**
 * Runs as a listing (`kvspace runs`, `GET /v1/agent/runs`, the web page): every run under
 * `/vthread/`, with its status — `running` only while a live process holds its lease, else
 * `interrupted` — when it started, its steps, calls and tokens. And the sweep a server makes at
 * start: runs left `running` by a process that is gone are marked `interrupted`.
 */
import { dirs, keys } from "../shared/keys.js";
import { usageKey } from "../tools/records/usage.js";
import { isTreeError } from "../tree/errors.js";
import type { Tree, TreeNode } from "../tree/types.js";
import { str } from "../tree/value.js";
import { type Leases, runHeld } from "./lease.js";
import { reasonKey, sessionDir, statusKey } from "./run-keys.js";
import { RunClient, type RunStatus, type RunSummary, type RunsListing } from "./run-schemas.js";

export { RUN_STATUSES, RunClient, type RunStatus, RunSummary, RunsListing } from "./run-schemas.js";

const text = (node: TreeNode | undefined): string | undefined =>
  node && node.kind !== "index" && node.kind !== "json" ? String(node.value.value) : undefined;

function asObject(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

export const clientKey = keys.runClient;

/** The MCP host of a session's run, when `/vthread/<vid>/client` says one. */
export async function clientOf(tree: Tree, vid: string): Promise<RunClient | undefined> {
  const node = await tree.get(clientKey(vid));
  const parsed = RunClient.safeParse(node?.kind === "json" ? node.value.value : undefined);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The run's status as a listing shows it: a stored `running`/`waiting …` whose lease is gone is
 * `interrupted`; an MCP host's session, which has no turn loop and so no status, is `session`.
 */
export async function statusOf(
  tree: Tree,
  vid: string,
): Promise<{ status: RunStatus; detail?: string; client?: RunClient } | undefined> {
  const stored = text(await tree.get(statusKey(vid)));
  if (stored === undefined) {
    const client = await clientOf(tree, vid);
    return client ? { status: "session", client } : undefined;
  }
  if (stored === "done" || stored === "failed" || stored === "interrupted") return { status: stored };
  const leased = await runHeld(tree, vid);
  const detail = stored === "running" ? {} : { detail: stored };
  return { status: leased ? "running" : "interrupted", ...detail };
}

export interface ListRunsOptions {
  status?: RunStatus;
  /** Only runs whose id contains this text. */
  vid?: string;
  /** Only runs that called a tool whose name contains this text. */
  tool?: string;
  /** At most this many runs (default 100). */
  limit?: number;
  after?: string;
}

/** A run's place in the listing: its directory's creation revision (newest first), then its id. */
interface RunPlace {
  vid: string;
  rev: number;
}

const newestFirst = (a: RunPlace, b: RunPlace): number =>
  b.rev - a.rev || (a.vid < b.vid ? 1 : a.vid > b.vid ? -1 : 0);

/** A page's `next`: the place of its last run, so a run deleted meanwhile does not lose the place. */
const cursorOf = (p: RunPlace): string => `${p.rev}:${p.vid}`;

function parseCursor(after: string, order: RunPlace[]): RunPlace | undefined {
  const m = /^(\d+):(.*)$/s.exec(after);
  if (m) return { rev: Number(m[1]), vid: m[2] as string };
  // a run id (as earlier servers' `next` gave, a directory name): its place now
  const vid = after.endsWith("/") ? after.slice(0, -1) : after;
  return order.find((p) => p.vid === vid);
}

/**
 * Every run directory under /vthread/ with the revision that created it, newest first. One listing
 * without values: a thousand runs cost a thousand names, nothing of a run is read.
 */
async function runsNewestFirst(tree: Tree): Promise<RunPlace[]> {
  const order: RunPlace[] = [];
  let after: string | undefined;
  do {
    const page = await tree.list(dirs.runs, { limit: 1000, values: false, ...(after ? { after } : {}) });
    for (const child of page.children)
      if (child.name.endsWith("/")) order.push({ vid: child.name.slice(0, -1), rev: child.createRev });
    after = page.next;
  } while (after);
  return order.sort(newestFirst);
}

/**
 * The runs under /vthread/, newest first (the run whose directory was made last leads), filtered by
 * status, id and tool used, a page at a time. A filter that matches few runs reads on until the
 * page is full (the id is checked before anything of the run is read).
 */
export async function listRuns(tree: Tree, options: ListRunsOptions = {}): Promise<RunsListing> {
  const limit = options.limit ?? 100;
  const order = await runsNewestFirst(tree);
  const from = options.after === undefined ? undefined : parseCursor(options.after, order);
  const runs: RunSummary[] = [];
  for (const [i, place] of order.entries()) {
    if (from && newestFirst(place, from) <= 0) continue;
    const { vid } = place;
    if (options.vid && !vid.includes(options.vid)) continue;
    const state = await statusOf(tree, vid);
    if (!state || (options.status && state.status !== options.status)) continue;
    const run = await summary(tree, vid, state);
    if (options.tool && !run.tools?.some((t) => t.includes(options.tool as string))) continue;
    runs.push(run);
    if (runs.length >= limit) return i + 1 < order.length ? { runs, next: cursorOf(place) } : { runs };
  }
  return { runs };
}

/** Run `vid`'s line in the listing, its status already read. */
export async function summary(
  tree: Tree,
  vid: string,
  state: { status: RunStatus; detail?: string; client?: RunClient },
): Promise<RunSummary> {
  const [usage, first] = await Promise.all([tree.get(usageKey(vid)), tree.get(`${sessionDir(vid)}0`)]);
  const u = asObject(usage?.kind === "json" ? usage.value.value : undefined);
  const tokens = asObject(u.tokens);
  const tools = Object.keys(asObject(u.tools));
  return {
    vid,
    ...state,
    // an MCP session has no messages: it started with its client's first request
    started: first?.mtime ?? (state.client ? (await tree.get(clientKey(vid)))?.mtime : undefined) ?? 0,
    steps: num(u.steps),
    calls: num(u.calls),
    tokens: { input: num(tokens.input), output: num(tokens.output) },
    ...(state.status === "interrupted" ? { resume: `byteseek run --resume ${vid}` } : {}),
    ...(tools.length > 0 ? { tools } : {}),
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
    const page = await tree
      .list(dirs.runs, { limit: 500, values: false, ...(after ? { after } : {}) })
      .catch((err: unknown) => {
        // a store where no run ever started (a server's first start): nothing to mark
        if (isTreeError(err, "TREE_NOT_FOUND")) return undefined;
        throw err;
      });
    if (page === undefined) return marked;
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
