import type { Api, Child } from "./api.js";
import { h, replace } from "./dom.js";
import { ancestors, isDir, parentOf, routeUrl } from "./keys.js";
import { createVisibleCounts } from "./visible-count.js";
import type { Change } from "./watch.js";

const PAGE = 100;

interface DirState {
  expanded: boolean;
  loaded: boolean;
  children: Child[];
  next: string | null;
  error: string | null;
  group: HTMLUListElement;
}

/**
 * The tree on the left: directories open lazily (children are fetched when a directory opens,
 * a page at a time), the open node is marked, and live changes refresh the directories shown.
 */
export function createTreePane(api: Api, container: HTMLElement) {
  const dirs = new Map<string, DirState>();
  const counts = createVisibleCounts(api);
  let current = "/";
  const pending = new Set<string>();
  let flushing = false;
  const rootGroup = h("ul", { class: "tree", role: "list" });
  replace(container, h("h2", { class: "pane-title" }, "Tree"), rootGroup);

  function state(dir: string): DirState {
    let s = dirs.get(dir);
    if (!s) {
      s = {
        expanded: false,
        loaded: false,
        children: [],
        next: null,
        error: null,
        group: h("ul", { role: "list" }),
      };
      dirs.set(dir, s);
    }
    return s;
  }

  async function load(dir: string, more = false): Promise<void> {
    const s = state(dir);
    try {
      if (more && s.next !== null) {
        const page = await api.list(dir, { limit: PAGE, after: s.next, values: false });
        s.children.push(...page.children);
        s.next = page.next ?? null;
      } else {
        // A refresh keeps as many children as were shown.
        const page = await api.list(dir, { limit: Math.max(PAGE, s.children.length), values: false });
        s.children = page.children;
        s.next = page.next ?? null;
      }
      s.error = null;
    } catch (err) {
      s.children = [];
      s.next = null;
      s.error = (err as Error).message;
    }
    s.loaded = true;
    renderGroup(dir);
  }

  function renderGroup(dir: string): void {
    const s = state(dir);
    if (!s.expanded) {
      s.group.hidden = true;
      return;
    }
    s.group.hidden = false;
    const items: HTMLElement[] = [];
    if (!s.loaded) items.push(h("li", { class: "muted" }, "loading…"));
    if (s.error) items.push(h("li", { class: "error" }, s.error));
    if (s.loaded && !s.error && s.children.length === 0) items.push(h("li", { class: "muted" }, "(empty)"));
    for (const c of s.children) items.push(renderChild(dir + c.name, c));
    if (s.next !== null)
      items.push(
        h(
          "li",
          {},
          h(
            "button",
            { type: "button", class: "link more", onclick: () => void load(dir, true) },
            `more in ${dir}…`,
          ),
        ),
      );
    replace(s.group, ...items);
  }

  /** A directory's entries, its hidden system entries left out (visible-count.ts). */
  function countOf(dir: string, count: number): HTMLElement {
    const el = h("span", { class: "count" });
    counts.show(el, dir, count, (n) => ` ${n}`);
    return el;
  }

  function renderChild(key: string, c: Child): HTMLElement {
    const link = h(
      "a",
      {
        href: routeUrl({ view: "tree", key }),
        "data-key": key,
        "aria-current": key === current ? "page" : false,
      },
      c.name,
    );
    if (!isDir(key))
      return h("li", { class: "leaf" }, h("span", { class: "twisty", "aria-hidden": "true" }), link);
    const s = state(key);
    const toggle = h(
      "button",
      {
        type: "button",
        class: "twisty",
        "aria-expanded": s.expanded ? "true" : "false",
        "aria-label": `${s.expanded ? "Collapse" : "Expand"} ${key}`,
        onclick: () => void setExpanded(key, !s.expanded),
      },
      s.expanded ? "▾" : "▸",
    );
    return h(
      "li",
      { class: "dir" },
      toggle,
      link,
      c.count !== undefined ? countOf(key, c.count) : null,
      s.group,
    );
  }

  async function setExpanded(dir: string, expanded: boolean): Promise<void> {
    const s = state(dir);
    s.expanded = expanded;
    rerenderParent(dir);
    if (expanded && !s.loaded) await load(dir);
    else renderGroup(dir);
  }

  function rerenderParent(dir: string): void {
    if (dir === "/") renderRoot();
    else renderGroup(parentOf(dir));
  }

  function renderRoot(): void {
    const s = state("/");
    s.expanded = true;
    const link = h(
      "a",
      {
        href: routeUrl({ view: "tree", key: "/" }),
        "data-key": "/",
        "aria-current": current === "/" ? "page" : false,
      },
      "/",
    );
    replace(
      rootGroup,
      h("li", { class: "dir" }, h("span", { class: "twisty", "aria-hidden": "true" }, "▾"), link, s.group),
    );
    renderGroup("/");
  }

  renderRoot();
  // The root opens at once, whatever view the page starts on.
  void load("/");

  return {
    /** The node shown (the key last revealed). */
    current: () => current,
    /** Opens every directory down to `key` and marks it as the current node. */
    async reveal(key: string): Promise<void> {
      current = key;
      const chain = [...ancestors(key), ...(isDir(key) ? [key] : [])];
      for (const dir of chain) {
        const s = state(dir);
        s.expanded = true;
        if (!s.loaded) await load(dir);
      }
      renderRoot();
      const link = container.querySelector<HTMLElement>(`a[data-key="${CSS.escape(key)}"]`);
      link?.scrollIntoView({ block: "nearest" });
    },
    /** Refreshes the shown directories a change touches. */
    onChanges(changes: Change[]): void {
      for (const ch of changes) {
        if (ch.type === "deltree") for (const d of [...dirs.keys()]) if (d.startsWith(ch.key)) dirs.delete(d);
        // A set may create parent directories: refresh the nearest shown ancestor, and its
        // parent, whose listing counts the children.
        const chain = ancestors(ch.key).reverse();
        const at = chain.findIndex((dir) => dirs.get(dir)?.loaded);
        if (at < 0) continue;
        pending.add(chain[at] as string);
        if (chain[at + 1] && dirs.get(chain[at + 1] as string)?.loaded) pending.add(chain[at + 1] as string);
      }
      // Changes come in bursts (an agent writing records): one refresh per burst.
      if (pending.size && !flushing) {
        flushing = true;
        setTimeout(() => {
          flushing = false;
          const dirsToLoad = [...pending];
          pending.clear();
          for (const dir of dirsToLoad) void load(dir);
        }, 50);
      }
    },
    /** Re-reads every loaded directory (after the watch lost its place). */
    reloadAll(): void {
      for (const [dir, s] of dirs) if (s.loaded) void load(dir);
    },
  };
}
