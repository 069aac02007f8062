/**
 * A directory's number of entries as a person counts them. The tree's `count` includes system
 * entries (names starting with `‥`, which listings hide), so `/byteseek/tools/` said 14 for 13 tools
 * (its `‥shipped/` counted). Children sort by code point after the all-digit names (tree/encoding.ts),
 * so the system entries of a directory are among the few names after `‥`: one small listing with
 * system entries from there finds them. Answers are kept per directory while its count holds, and
 * few listings run at once.
 */
import type { Api } from "./api.js";

const SYSTEM = "‥";
/** Listings asked at once, so a directory of many subdirectories does not flood the server. */
const AT_ONCE = 4;

export interface VisibleCounts {
  /** Writes `format(count)` into `el` at once, and the count without system entries when known. */
  show(el: HTMLElement, dir: string, count: number, format?: (n: number) => string): void;
}

export function createVisibleCounts(api: Api): VisibleCounts {
  const known = new Map<string, { count: number; hidden: Promise<number> }>();
  const queue: Array<() => void> = [];
  let running = 0;

  function next(): void {
    while (running < AT_ONCE && queue.length) {
      running++;
      (queue.shift() as () => void)();
    }
  }

  function systemEntries(dir: string): Promise<number> {
    return new Promise((resolve) => {
      queue.push(() => {
        api
          .list(dir, { after: SYSTEM, limit: 100, values: false, system: true })
          .then(
            (page) => resolve(page.children.filter((c) => c.name.startsWith(SYSTEM)).length),
            () => resolve(0),
          )
          .finally(() => {
            running--;
            next();
          });
      });
      next();
    });
  }

  return {
    show(el, dir, count, format = String) {
      el.textContent = format(count);
      if (count === 0) return;
      let entry = known.get(dir);
      if (entry?.count !== count) {
        entry = { count, hidden: systemEntries(dir) };
        known.set(dir, entry);
      }
      void entry.hidden.then((hidden) => {
        if (hidden > 0) el.textContent = format(Math.max(0, count - hidden));
      });
    },
  };
}
