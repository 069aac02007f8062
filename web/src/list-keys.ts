/**
 * The keys that move through a long list — the tools list (5,000 rows, drawn only where in view)
 * and the runs list (a page of 50 at a time) — as in a listbox: ↑/↓ one row, PageUp/PageDown a
 * screenful, Home/End the first and last row of the whole list (not of what is drawn), Enter opens
 * the row. Each list moves its window so the row reached is on screen.
 */

export type ListKey = { to: number } | { open: true };

/**
 * Where `key` moves from row `at` (-1: none yet) of `total`, `page` rows a screenful; undefined for
 * a key the list leaves alone (typing, Tab, a key with a modifier).
 */
export function listKey(e: KeyboardEvent, at: number, total: number, page: number): ListKey | undefined {
  if (e.altKey || e.ctrlKey || e.metaKey || total === 0) return undefined;
  const clamp = (i: number) => Math.max(0, Math.min(total - 1, i));
  const step = Math.max(1, page);
  switch (e.key) {
    case "ArrowDown":
      return { to: clamp(at < 0 ? 0 : at + 1) };
    case "ArrowUp":
      return { to: clamp(at < 0 ? 0 : at - 1) };
    case "PageDown":
      return { to: clamp(at < 0 ? 0 : at + step) };
    case "PageUp":
      return { to: clamp(at - step) };
    case "Home":
      return { to: 0 };
    case "End":
      return { to: total - 1 };
    case "Enter":
      return at >= 0 ? { open: true } : undefined;
    default:
      return undefined;
  }
}
