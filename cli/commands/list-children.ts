import { SYSTEM_PREFIX } from "../../tree/path.js";
import type { ListChild, Tree } from "../../tree/types.js";

/** Every visible child of a directory, page by page, in the tree's natural order. */
export async function* listChildren(
  tree: Tree,
  dir: string,
  options: { signal?: AbortSignal; pageSize?: number; visibleCounts?: boolean } = {},
): AsyncGenerator<ListChild> {
  const { signal, pageSize = 1000 } = options;
  let after: string | undefined;
  do {
    signal?.throwIfAborted();
    const page = await tree.list(dir, { limit: pageSize, ...(after === undefined ? {} : { after }) });
    for (const child of page.children)
      yield options.visibleCounts ? await withVisibleCount(tree, dir, child) : child;
    after = page.next;
  } while (after !== undefined);
}

/**
 * A directory child with the count a person reads: its visible children. The tree counts system
 * entries (`‥…`) too (`/byteseek/tools/` holds `‥shipped/` beside the tools), which listings hide.
 */
async function withVisibleCount(tree: Tree, dir: string, child: ListChild): Promise<ListChild> {
  if (child.kind !== "index" || child.count === 0) return child;
  const hidden = await systemEntries(tree, dir + child.name);
  return hidden === 0 ? child : { ...child, count: Math.max(0, child.count - hidden) };
}

/**
 * How many system entries `dir` holds. They sort together (their names start with `‥`, U+2025), so
 * a listing from just before that character reads them alone, not the rest of the directory.
 */
async function systemEntries(tree: Tree, dir: string): Promise<number> {
  let n = 0;
  let after: string | undefined = "\u2024";
  while (after !== undefined) {
    const page = await tree.list(dir, { limit: 100, after, system: true, values: false });
    for (const c of page.children) {
      if (c.name.startsWith(SYSTEM_PREFIX)) n++;
      else if (c.name > SYSTEM_PREFIX) return n;
    }
    after = page.next;
  }
  return n;
}
