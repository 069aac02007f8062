/**
 * The nodes `get` answered lately, kept as the frozen objects it answers, so a hot key costs a map
 * lookup instead of a LevelDB read, a JSON parse and a node built anew. Bounded by an estimate of
 * the bytes held; the oldest entries go first. Write-through: every commit forgets the keys its
 * batch wrote before it answers its writers, so a read never sees a value older than the last
 * acknowledged write (a read racing an unacknowledged write may see either, as without the cache).
 * The objects are frozen because every caller shares them.
 */
import type { TreeNode } from "./types.js";

interface Entry {
  node: TreeNode;
  size: number;
}

export class NodeCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): TreeNode | undefined {
    return this.#entries.get(key)?.node;
  }

  /** Keeps `node`, read from a stored record of `rawLength` characters; answers it frozen. */
  remember(key: string, node: TreeNode, rawLength: number): TreeNode {
    const size = 2 * (key.length + rawLength) + 160;
    if (size > this.maxBytes / 64) return node; // a large value would push out many small ones
    deepFreeze(node);
    this.forget(key);
    while (this.#bytes + size > this.maxBytes) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.forget(oldest.value);
    }
    this.#entries.set(key, { node, size });
    this.#bytes += size;
    return node;
  }

  forget(key: string): void {
    const e = this.#entries.get(key);
    if (!e) return;
    this.#entries.delete(key);
    this.#bytes -= e.size;
  }
}

function deepFreeze(v: unknown): void {
  if (typeof v !== "object" || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const child of Object.values(v)) deepFreeze(child);
}
