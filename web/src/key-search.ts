/**
 * Substring search of keys (and values) under a directory, from a form at the top of the tree
 * pane. The server's grep (GET /v1/grep/<dir/>) answers a page at a time, within its own budget of
 * bytes and time, so a big tree costs what the person asks to see. Results are links to the keys.
 */
import { h, replace } from "./dom.js";
import { isDir, parentOf, routeUrl } from "./keys.js";
import type { GrepMatch, TreeOps } from "./tree-ops-api.js";
import { errorText } from "./view-parts.js";

/** Matches per page of results. */
const PAGE = 100;

/** One page of matches; `more` reads the next, or is null at the end. */
interface Page {
  matches: GrepMatch[];
  /** Keys the server read for this page. */
  scanned?: number;
  /** The server's budget (bytes, time), not the page size, ended this page. */
  truncated?: boolean;
  more: (() => Promise<Page>) | null;
}

export function createKeySearch(
  ops: TreeOps,
  pane: HTMLElement,
  currentKey: () => string,
  show: (el: HTMLElement) => void,
): void {
  const text = h("input", {
    id: "key-search-input",
    type: "search",
    placeholder: "Keys containing…",
    spellcheck: "false",
    autocomplete: "off",
    required: true,
  });
  const scope = h("input", { id: "key-search-scope", spellcheck: "false", autocomplete: "off", value: "/" });
  let scopeEdited = false;
  scope.addEventListener("input", () => {
    scopeEdited = true;
  });
  // Until the person sets it, the scope follows the directory on screen.
  text.addEventListener("focus", () => {
    if (!scopeEdited) {
      const k = currentKey();
      scope.value = isDir(k) ? k : parentOf(k);
    }
  });
  const values = h("input", { type: "checkbox", id: "key-search-values" });
  const form = h(
    "form",
    {
      class: "key-search",
      role: "search",
      onsubmit: (e: Event) => {
        e.preventDefault();
        const pattern = text.value.trim();
        let dir = scope.value.trim() || "/";
        if (!dir.startsWith("/")) dir = `/${dir}`;
        if (!isDir(dir)) dir += "/";
        if (pattern) void run(pattern, dir, values.checked);
      },
    },
    h("label", { for: "key-search-input", class: "visually-hidden" }, "Search keys containing"),
    text,
    h("label", { for: "key-search-scope" }, "in"),
    scope,
    h("label", { class: "check" }, values, " values too"),
    h("button", { type: "submit", id: "key-search-go" }, "Search"),
  );
  pane.insertBefore(form, pane.children[1] ?? null);

  async function run(pattern: string, dir: string, withValues: boolean): Promise<void> {
    const status = h("p", { role: "status", id: "key-search-status" }, "searching…");
    const list = h("ol", { class: "results", id: "key-search-results" });
    const more = h("div", { class: "more" });
    show(
      h(
        "section",
        { class: "node", "aria-labelledby": "search-title" },
        h(
          "h1",
          { id: "search-title" },
          `${withValues ? "Keys and values" : "Keys"} containing `,
          h("code", {}, pattern),
          " in ",
          h("code", {}, dir),
        ),
        status,
        list,
        more,
      ),
    );
    let found = 0;
    let read = 0;
    let counted = false;
    const showPage = async (next: () => Promise<Page>): Promise<void> => {
      replace(more);
      let page: Page;
      try {
        page = await next();
      } catch (err) {
        status.textContent = `Search failed: ${errorText(err)}`;
        return;
      }
      found += page.matches.length;
      if (page.scanned !== undefined) {
        read += page.scanned;
        counted = true;
      }
      list.append(...page.matches.map((m) => resultItem(m, pattern)));
      status.textContent = `${found} match${found === 1 ? "" : "es"}${page.more ? " so far" : ""}${counted ? ` (${read} keys read)` : ""}.${page.truncated ? " The server paused this page at its budget: ask for more to go on." : ""}`;
      if (page.more) {
        const moreFn = page.more;
        replace(
          more,
          h(
            "button",
            { type: "button", id: "key-search-more", onclick: () => void showPage(moreFn) },
            "More results",
          ),
        );
      }
    };
    await showPage(() => grepPage(ops, dir, pattern, withValues));
  }
}

/** A page of the server's grep (GET /v1/grep/<dir/>, case-insensitive), and how to read the next. */
async function grepPage(
  ops: TreeOps,
  dir: string,
  pattern: string,
  withValues: boolean,
  after?: string,
): Promise<Page> {
  const r = await ops.grep(dir, {
    pattern,
    keys: true,
    values: withValues,
    limit: PAGE,
    ...(after !== undefined ? { after } : {}),
  });
  const next = r.next;
  return {
    matches: r.matches,
    ...(r.scanned ? { scanned: r.scanned.keys } : {}),
    ...(r.truncated ? { truncated: true } : {}),
    more: next !== undefined ? () => grepPage(ops, dir, pattern, withValues, next) : null,
  };
}

/** A result: the key as a link, the matching part marked, and what matched in the value. */
function resultItem(m: GrepMatch, pattern: string): HTMLElement {
  return h(
    "li",
    {},
    h("a", { href: routeUrl({ view: "tree", key: m.key }), "data-key": m.key }, ...marked(m.key, pattern)),
    m.preview
      ? h(
          "span",
          { class: "muted" },
          m.line !== undefined ? ` line ${m.line}: ` : " ",
          ...marked(m.preview, pattern),
        )
      : null,
  );
}

/** `text` with each case-insensitive occurrence of `pattern` in a <mark>. */
function marked(text: string, pattern: string): Array<string | HTMLElement> {
  const out: Array<string | HTMLElement> = [];
  const lower = text.toLowerCase();
  const needle = pattern.toLowerCase();
  let i = 0;
  for (let j = lower.indexOf(needle); needle && j >= 0; j = lower.indexOf(needle, i)) {
    if (j > i) out.push(text.slice(i, j));
    out.push(h("mark", {}, text.slice(j, j + needle.length)));
    i = j + needle.length;
  }
  if (i < text.length) out.push(text.slice(i));
  return out;
}
