/**
 * The index of the tree's catalogue, kept live: built from `/byteseek/tools/` at start, then from
 * the tree's watch (of the whole tree, so that its revision follows the store's), so a declaration written, changed or removed is found (or not) as soon as its
 * event arrives — on LevelDB, on etcd and through a server alike, since all three feed one watch.
 */
import { childrenOf } from "../../tree/children.js";
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
  const stop = new AbortController();
  let seen = 0;
  const waiters = new Set<{ rev: number; resolve: () => void }>();

  function advance(rev: number): void {
    seen = Math.max(seen, rev);
    for (const w of waiters)
      if (w.rev <= seen) {
        waiters.delete(w);
        w.resolve();
      }
  }

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
    advance(batch.rev);
  }

  async function load(): Promise<number> {
    const rev = tree.syncRevision ? await tree.syncRevision() : tree.revision();
    for await (const child of childrenOf(tree, TOOLS_DIR)) {
      if (child.kind === "index" || child.name.endsWith("/")) continue;
      const node = child.value === undefined ? await tree.get(`${TOOLS_DIR}${child.name}`) : child;
      const value =
        node && node.kind === "json" ? (node as { value?: { value: unknown } }).value?.value : undefined;
      const tool = indexedToolOf(child.name, value);
      if (tool) index.upsert(tool);
    }
    return rev;
  }

  async function follow(from: number): Promise<void> {
    let next = from + 1;
    while (!stop.signal.aborted) {
      try {
        // the whole tree, not only /byteseek/tools/: every batch moves `seen`, so a search can wait
        // for exactly the revision it was asked at (other keys' batches are passed over at once)
        for await (const batch of tree.watch("/", { fromRev: next, signal: stop.signal })) {
          apply(batch);
          next = batch.rev + 1;
        }
        return;
      } catch (err) {
        if (stop.signal.aborted) return;
        onError?.(err);
        // the history it needs may be compacted away: start again from a fresh listing
        for (const name of index.names()) index.remove(name);
        next = (await load().catch(() => next - 1)) + 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  const ready = load().then((rev) => {
    advance(rev);
    void follow(rev);
  });

  return {
    index,
    ready,
    revision: () => seen,
    caughtUp(rev) {
      if (rev <= seen || stop.signal.aborted) return Promise.resolve();
      return new Promise((resolve) => waiters.add({ rev, resolve }));
    },
    close() {
      stop.abort();
      for (const w of waiters) w.resolve();
      waiters.clear();
    },
  };
}
