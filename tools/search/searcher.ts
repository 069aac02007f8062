/**
 * Search as a run sees it: the live index of the whole catalogue, narrowed to the tools the run is
 * offered (valid, enabled, granted), the same set its tool list is built from. The index starts on
 * first use, so a one-shot CLI command that never searches never reads the catalogue for it.
 */
import type { Tree } from "../../tree/types.js";
import type { ToolCatalogue } from "../catalogue/catalogue.js";
import type { SearchHit } from "./index.js";
import { createLiveToolIndex, type LiveToolIndex } from "./live.js";

export interface ToolSearcher {
  /** The offered tools that match `query`, best first. */
  search(query: string, options: { vid: string; limit?: number }): Promise<SearchHit[]>;
  /** Stops following the tree. */
  close(): void;
}

export interface ToolSearcherOptions {
  tree: Tree;
  /** The catalogue as run `vid` sees it (the runtime's listTools). */
  listTools: (vid: string) => Promise<ToolCatalogue>;
  onError?: (err: unknown) => void;
}

/** The names a run is offered: valid, enabled, not blocked by its grant. */
export function offeredNames(catalogue: ToolCatalogue): Set<string> {
  return new Set(catalogue.valid.filter((t) => t.declaration.enabled && !t.blocked).map((t) => t.name));
}

export function createToolSearcher({ tree, listTools, onError }: ToolSearcherOptions): ToolSearcher {
  let live: LiveToolIndex | undefined;
  let closed = false;
  return {
    async search(query, { vid, limit = 10 }) {
      if (closed) return [];
      live ??= createLiveToolIndex({ tree, ...(onError ? { onError } : {}) });
      const [offered] = await Promise.all([listTools(vid).then(offeredNames), live.ready]);
      // everything written before the search was asked for is in the answer
      await live.caughtUp(tree.revision());
      return live.index.search(query, { limit, accept: (name) => offered.has(name) });
    },
    close() {
      closed = true;
      live?.close();
    },
  };
}
