/**
 * The nodes `get` answered lately, kept as the frozen objects it answers, so a hot key costs a map
 * lookup instead of a LevelDB read, a JSON parse and a node built anew. Bounded by an estimate of
 * the bytes held (see SizedCache). Write-through: every commit forgets the keys its batch wrote
 * before it answers its writers, so a read never sees a value older than the last acknowledged
 * write (a read racing an unacknowledged write may see either, as without the cache). The objects
 * are frozen because every caller shares them.
 */
import { SizedCache } from "./sized-cache.js";
import type { TreeNode } from "./types.js";

export class NodeCache {
  readonly #nodes: SizedCache<TreeNode>;

  constructor(maxBytes: number) {
    this.#nodes = new SizedCache(maxBytes);
  }

  get(key: string): TreeNode | undefined {
    return this.#nodes.get(key);
  }

  /** Keeps `node`, read from a stored record of `rawLength` characters; answers it frozen. */
  remember(key: string, node: TreeNode, rawLength: number): TreeNode {
    deepFreeze(node);
    this.#nodes.set(key, node, rawLength);
    return node;
  }

  forget(key: string): void {
    this.#nodes.delete(key);
  }
}

/** Freezes `v` and everything it holds: cached nodes are shared by every caller. */
export function deepFreeze(v: unknown): void {
  if (typeof v !== "object" || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const child of Object.values(v)) deepFreeze(child);
}
