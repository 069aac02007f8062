/**
 * An index kept current from the tree: loaded once from a listing, then fed every batch of the
 * whole tree's watch (so its revision follows the store's, and a question can wait for exactly the
 * revision it was asked at). When the watch is lost (its history compacted away, a server gone),
 * the index is emptied and loaded again, and the watch resumes after that load. The caller owns
 * what is indexed: `load` fills it, `apply` takes in a batch, `reset` empties it.
 */
import type { Tree, WatchBatch } from "./types.js";

export interface TreeFollowerOptions {
  tree: Tree;
  /** Fills the index from what the tree holds now. */
  load(): Promise<void>;
  /** Takes in one batch of the watch of `/`. */
  apply(batch: WatchBatch): void;
  /** Empties the index, before it is loaded again after the watch was lost. */
  reset(): void;
  /** Where failures of the watch are told (it reloads, then resumes). */
  onError?: ((err: unknown) => void) | undefined;
}

export interface TreeFollower {
  /** Loads and starts following, the first time it is called; settles once loaded. */
  start(): Promise<void>;
  /** The revision of the last change taken in. */
  revision(): number;
  /**
   * Settles once every change up to `rev` is taken in (or the follower is closed), or after
   * `maxWaitMs` when given (the caller then answers what it has).
   */
  caughtUp(rev: number, maxWaitMs?: number): Promise<void>;
  close(): void;
}

export function followTree(o: TreeFollowerOptions): TreeFollower {
  const { tree } = o;
  const stop = new AbortController();
  let seen = 0;
  const waiters = new Set<{ rev: number; resolve: () => void }>();
  let started: Promise<void> | undefined;

  function advance(rev: number): void {
    seen = Math.max(seen, rev);
    for (const w of waiters)
      if (w.rev <= seen) {
        waiters.delete(w);
        w.resolve();
      }
  }

  /** Loads the index; answers the revision it is current as of. */
  async function load(): Promise<number> {
    const rev = tree.syncRevision ? await tree.syncRevision() : tree.revision();
    await o.load();
    return rev;
  }

  async function follow(from: number): Promise<void> {
    let next = from + 1;
    while (!stop.signal.aborted) {
      try {
        for await (const batch of tree.watch("/", { fromRev: next, signal: stop.signal })) {
          o.apply(batch);
          advance(batch.rev);
          next = batch.rev + 1;
        }
        return;
      } catch (err) {
        if (stop.signal.aborted) return;
        o.onError?.(err);
        // the history it needs may be compacted away: load again
        o.reset();
        next = (await load().catch(() => next - 1)) + 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  return {
    start() {
      started ??= load().then((rev) => {
        advance(rev);
        void follow(rev);
      });
      return started;
    },
    revision: () => seen,
    caughtUp(rev, maxWaitMs) {
      if (rev <= seen || stop.signal.aborted) return Promise.resolve();
      return new Promise((resolve) => {
        const w = {
          rev,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        const timer =
          maxWaitMs === undefined
            ? undefined
            : setTimeout(() => {
                waiters.delete(w);
                resolve();
              }, maxWaitMs);
        waiters.add(w);
      });
    },
    close() {
      stop.abort();
      for (const w of waiters) w.resolve();
      waiters.clear();
    },
  };
}
