import type { Api, Child } from "./api.js";

/**
 * A directory's children, read a page at a time: `load()` re-reads at least as many as are shown
 * (a live view stays as long as it was), `load(true)` appends the page after the last one shown.
 */
export function createPages(api: Api, dir: string, size: number) {
  const state = { shown: [] as Child[], next: null as string | null };
  return Object.assign(state, {
    async load(appendPage = false): Promise<void> {
      const page =
        appendPage && state.next !== null
          ? await api.list(dir, { limit: size, after: state.next })
          : await api.list(dir, { limit: Math.max(size, state.shown.length) });
      state.shown = appendPage ? [...state.shown, ...page.children] : page.children;
      state.next = page.next ?? null;
    },
    /** Nothing is shown (the directory is gone). */
    clear(): void {
      state.shown = [];
      state.next = null;
    },
  });
}
