/**
 * A map bounded by an estimate of the bytes it holds, for the tree's caches. Two generations
 * instead of a recency list: entries go into the young map; once it holds half the budget it
 * becomes the old one (the previous old one is dropped whole), and a hit in the old map moves the
 * entry back to the young one. Every operation is O(1): no list to maintain, and no scan past the
 * holes a Map keeps after deletions (which evicting by `keys().next()` one entry at a time would
 * walk on every write).
 */
interface Entry<V> {
  value: V;
  size: number;
}

export class SizedCache<V> {
  #young = new Map<string, Entry<V>>();
  #old = new Map<string, Entry<V>>();
  #youngBytes = 0;

  /** `maxBytes` 0 keeps nothing; an entry over a 64th of the budget is not kept. */
  constructor(private readonly maxBytes: number) {}

  /** What an entry is taken to cost: its key and stored text as UTF-16, plus the objects around them. */
  static estimate(key: string, storedLength: number): number {
    return 2 * (key.length + storedLength) + 160;
  }

  get(key: string): V | undefined {
    const young = this.#young.get(key);
    if (young) return young.value;
    const old = this.#old.get(key);
    if (!old) return undefined;
    this.#old.delete(key);
    this.#insert(key, old);
    return old.value;
  }

  has(key: string): boolean {
    return this.#young.has(key) || this.#old.has(key);
  }

  /** Keeps `value`, stored as `storedLength` characters. */
  set(key: string, value: V, storedLength: number): void {
    this.delete(key);
    const size = SizedCache.estimate(key, storedLength);
    if (size > this.maxBytes / 64) return;
    this.#insert(key, { value, size });
  }

  delete(key: string): void {
    const young = this.#young.get(key);
    if (young) {
      this.#young.delete(key);
      this.#youngBytes -= young.size;
    }
    this.#old.delete(key);
  }

  #insert(key: string, entry: Entry<V>): void {
    this.#young.set(key, entry);
    this.#youngBytes += entry.size;
    if (this.#youngBytes > this.maxBytes / 2) {
      this.#old = this.#young;
      this.#young = new Map();
      this.#youngBytes = 0;
    }
  }
}
