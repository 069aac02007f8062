/** Every child of a directory, page by page: what a reader of a whole small directory wants. */
import type { ListChild, Tree } from "./types.js";

/** The children of `dir` in key order, fetched `pageSize` at a time; a directory that does not exist has none. */
export async function* childrenOf(tree: Tree, dir: string, pageSize = 1000): AsyncGenerator<ListChild> {
  let after: string | undefined;
  do {
    let page: Awaited<ReturnType<Tree["list"]>>;
    try {
      page = await tree.list(dir, { limit: pageSize, ...(after ? { after } : {}) });
    } catch (err) {
      if ((err as { code?: string }).code === "TREE_NOT_FOUND") return;
      throw err;
    }
    yield* page.children;
    after = page.next;
  } while (after);
}
