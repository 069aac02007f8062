/**
 * Subtree listings (`?recursive=1`, `?depth=N`): depth-first in natural order, paginated like a
 * plain listing. A child's `name` is its path relative to the listed directory (`a/`, `a/x`), and
 * `after` takes such a path: the walk resumes inside the directories it names, then after them.
 */
import { isTreeError } from "../tree/errors.js";
import type { ListChild, ListOptions, ListResult, Tree } from "../tree/types.js";

export interface SubtreeEntry {
  name: string;
  child: ListChild;
}

export interface SubtreeOptions {
  depth: number;
  limit: number;
  /** Stop once the entries weigh this much (`weigh`), answering `next`. */
  maxWeight?: number;
  /** Children read from the tree at a time (default 1000). */
  chunk?: number;
  after?: string;
  values?: boolean;
  system?: boolean;
  signal?: AbortSignal;
}

/** Splits a relative path into its steps, directories keeping their '/': `a/b/c` → [`a/`, `b/`, `c`]. */
function steps(path: string): string[] {
  const parts = path.match(/[^/]+\/?/g);
  return parts ?? [];
}

/** Where a walk is: the directory, its path relative to the top, the levels left, the cursor's steps inside it. */
interface At {
  dir: string;
  rel: string;
  depth: number;
  after: string[];
}

async function* walk(
  tree: Tree,
  { dir, rel, depth, after }: At,
  o: SubtreeOptions,
): AsyncGenerator<SubtreeEntry> {
  let from: string | undefined;
  const [first, ...more] = after;
  if (first !== undefined) {
    from = first;
    // Resume inside the directory the cursor points into (its own entry was already returned).
    if (first.endsWith("/") && depth > 1)
      yield* walkIfPresent(tree, { dir: dir + first, rel: rel + first, depth: depth - 1, after: more }, o);
  }
  const base: ListOptions = { limit: Math.min(o.limit + 1, o.chunk ?? 1000) };
  if (o.values === false) base.values = false;
  if (o.system) base.system = true;
  for (;;) {
    if (o.signal?.aborted) return;
    const page: ListResult = await tree.list(dir, from === undefined ? base : { ...base, after: from });
    for (const child of page.children) {
      yield { name: rel + child.name, child };
      if (child.kind === "index" && depth > 1)
        yield* walkIfPresent(
          tree,
          { dir: dir + child.name, rel: rel + child.name, depth: depth - 1, after: [] },
          o,
        );
    }
    if (page.next === undefined) return;
    from = page.next;
  }
}

/** A directory removed while we walk is simply not there any more. */
async function* walkIfPresent(tree: Tree, at: At, o: SubtreeOptions): AsyncGenerator<SubtreeEntry> {
  try {
    yield* walk(tree, at, o);
  } catch (err) {
    if (!isTreeError(err, "TREE_NOT_FOUND")) throw err;
  }
}

/**
 * One page of the subtree of `dir`, `depth` levels deep, each entry shaped by `shape` as it comes
 * (so whole values are not held past their turn) with the weight it adds.
 */
export async function listSubtree<T>(
  tree: Tree,
  dir: string,
  o: SubtreeOptions,
  shape: (e: SubtreeEntry) => { item: T; weight: number },
): Promise<{ entries: T[]; next?: string }> {
  const entries: T[] = [];
  let weight = 0;
  let last = "";
  const it = walk(
    tree,
    { dir, rel: "", depth: o.depth, after: o.after === undefined ? [] : steps(o.after) },
    o,
  );
  try {
    for await (const e of it) {
      if (entries.length === o.limit || (o.maxWeight !== undefined && weight >= o.maxWeight))
        return { entries, next: last };
      const shaped = shape(e);
      entries.push(shaped.item);
      weight += shaped.weight;
      last = e.name;
    }
  } finally {
    await it.return(undefined);
  }
  return { entries };
}
