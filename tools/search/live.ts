/**
 * The index of the tree's catalogue, kept live: built from `/byteseek/tools/` at start, then from
 * the tree's watch (of the whole tree, so that its revision follows the store's), so a declaration written, changed or removed is found (or not) as soon as its
 * event arrives — on LevelDB, on etcd and through a server alike, since all three feed one watch.
 */
import { childrenOf } from "../../tree/children.js";
import { followTree } from "../../tree/follow.js";
import type { Tree, WatchBatch } from "../../tree/types.js";
import { TOOLS_DIR } from "../catalogue/catalogue.js";
import { indexedToolOf } from "./document.js";
import { createToolIndex, type ToolIndex } from "./index.js";

export interface LiveToolIndex {
  readonly index: ToolIndex;
  /** Settles once the catalogue as of start is indexed and the watch follows. */
  readonly ready: Promise<void>;
  /** The revision of the last change the index has taken in. */
  revision(): number;
  /** Settles when the index has taken in every change up to `rev` (or the index is closed). */
  caughtUp(rev: number): Promise<void>;
  close(): void;
}

export interface LiveIndexOptions {
  tree: Tree;
  /** Where failures of the watch are told (it restarts from the last revision it saw). */
  onError?: (err: unknown) => void;
}

/** A tool's name from its key: `/byteseek/tools/<name>`, nothing deeper. */
function nameOf(key: string): string | undefined {
  if (!key.startsWith(TOOLS_DIR)) return undefined;
  const name = key.slice(TOOLS_DIR.length);
  return name === "" || name.includes("/") ? undefined : name;
}

export function createLiveToolIndex({
  tree,
  onError,
}: LiveToolIndex extends never ? never : LiveIndexOptions): LiveToolIndex {
  const index = createToolIndex();

  function apply(batch: WatchBatch): void {
    for (const event of batch.events) {
      if (event.type === "deltree") {
        // a directory at or above /byteseek/tools/ went, and every tool with it
        if (TOOLS_DIR.startsWith(event.key)) for (const name of index.names()) index.remove(name);
        continue;
      }
      const name = nameOf(event.key);
      if (name === undefined) continue;
      const tool =
        event.type === "put" && event.value?.kind === "json"
          ? indexedToolOf(name, event.value.value)
          : undefined;
      if (tool) index.upsert(tool);
      else index.remove(name);
    }
  }

  async function load(): Promise<void> {
    for await (const child of childrenOf(tree, TOOLS_DIR)) {
      if (child.kind === "index" || child.name.endsWith("/")) continue;
      const node = child.value === undefined ? await tree.get(`${TOOLS_DIR}${child.name}`) : child;
      const value =
        node && node.kind === "json" ? (node as { value?: { value: unknown } }).value?.value : undefined;
      const tool = indexedToolOf(child.name, value);
      if (tool) index.upsert(tool);
    }
  }

  // the whole tree, not only /byteseek/tools/: every batch moves the revision, so a search can
  // wait for exactly the revision it was asked at (other keys' batches are passed over at once)
  const follower = followTree({
    tree,
    load,
    apply,
    reset: () => {
      for (const name of index.names()) index.remove(name);
    },
    onError,
  });

  return {
    index,
    ready: follower.start(),
    revision: follower.revision,
    caughtUp: (rev) => follower.caughtUp(rev),
    close: follower.close,
  };
}
