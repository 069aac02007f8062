import type { ListChild, Tree } from "../../tree/types.js";

/** Every visible child of a directory, page by page, in the tree's natural order. */
export async function* listChildren(
  tree: Tree,
  dir: string,
  options: { signal?: AbortSignal; pageSize?: number } = {},
): AsyncGenerator<ListChild> {
  const { signal, pageSize = 1000 } = options;
  let after: string | undefined;
  do {
    signal?.throwIfAborted();
    const page = await tree.list(dir, { limit: pageSize, ...(after === undefined ? {} : { after }) });
    yield* page.children;
    after = page.next;
  } while (after !== undefined);
}
