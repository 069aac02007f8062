import type { WatchBatch, WatchEvent } from "./types.js";

/** Does a change concern a watcher of `prefix`? A deltree of an ancestor does. */
export function eventMatches(prefix: string, ev: WatchEvent): boolean {
  if (ev.key.startsWith(prefix)) return true;
  return ev.type === "deltree" && prefix.startsWith(ev.key);
}

export function filterBatch(prefix: string, batch: WatchBatch): WatchBatch | undefined {
  const events = batch.events.filter((ev) => eventMatches(prefix, ev));
  return events.length === 0 ? undefined : { rev: batch.rev, events };
}

interface Subscriber {
  prefix: string;
  push(batch: WatchBatch): void;
}

/** Fans committed batches out to live watchers, in revision order. */
export class WatchHub {
  readonly #subs = new Set<Subscriber>();

  subscribe(prefix: string, push: (batch: WatchBatch) => void): () => void {
    const sub: Subscriber = { prefix, push };
    this.#subs.add(sub);
    return () => this.#subs.delete(sub);
  }

  publish(batches: WatchBatch[]): void {
    for (const sub of this.#subs) {
      for (const b of batches) {
        const mine = filterBatch(sub.prefix, b);
        if (mine) sub.push(mine);
      }
    }
  }

  get size(): number {
    return this.#subs.size;
  }
}

/**
 * A queue an async iterator drains: items pushed while nobody waits are kept, and a waiting
 * reader is woken by the next push or by close.
 */
export class AsyncQueue<T> {
  readonly #items: T[] = [];
  #wake: (() => void) | undefined;
  #closed = false;

  push(item: T): void {
    if (this.#closed) return;
    this.#items.push(item);
    this.#wake?.();
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** The next item, or undefined once closed and drained. */
  async next(): Promise<T | undefined> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) return item;
      if (this.#closed) return undefined;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }
}
