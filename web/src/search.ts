import type { Api, Child } from "./api.js";
import { h, preview } from "./dom.js";
import { isDir, nameOf, parentOf, type Route, routeUrl } from "./keys.js";
import { valueText } from "./value-editor.js";

/** At most this many matches are shown, and this many children read, per search. */
const MAX_MATCHES = 200;
const MAX_SCANNED = 20_000;

/**
 * Search by key prefix: `/byteseek/to` lists `/byteseek/` and keeps the children whose name
 * starts with `to`; a prefix ending in `/` opens that directory; an exact key opens it.
 */
export function createSearch(
  api: Api,
  form: HTMLFormElement,
  navigate: (route: Route) => void,
  show: (el: HTMLElement) => void,
): void {
  const input = form.querySelector<HTMLInputElement>("input")!;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    let prefix = input.value.trim();
    if (!prefix) return;
    if (!prefix.startsWith("/")) prefix = `/${prefix}`;
    if (isDir(prefix)) return navigate({ view: "tree", key: prefix });
    void run(prefix);
  });
  // "/" anywhere outside a field jumps to the search box.
  document.addEventListener("keydown", (e) => {
    const t = e.target as HTMLElement;
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (t.closest("input, textarea, select, [contenteditable]")) return;
    e.preventDefault();
    input.focus();
    input.select();
  });

  async function run(prefix: string): Promise<void> {
    const dir = parentOf(prefix);
    const start = nameOf(prefix);
    const matches: Child[] = [];
    let after: string | undefined;
    let scanned = 0;
    const status = h("p", { role: "status" }, "searching…");
    const list = h("ul", { class: "results" });
    show(
      h(
        "section",
        { class: "node" },
        h("h1", {}, "Keys starting with ", h("code", {}, prefix)),
        status,
        list,
      ),
    );
    try {
      do {
        const page = await api.list(dir, { limit: 1000, ...(after === undefined ? {} : { after }) });
        scanned += page.children.length;
        for (const c of page.children)
          if (c.name.startsWith(start) && matches.length < MAX_MATCHES) matches.push(c);
        after = page.next ?? undefined;
      } while (after !== undefined && matches.length < MAX_MATCHES && scanned < MAX_SCANNED);
    } catch (err) {
      status.textContent = (err as Error).message;
      return;
    }
    status.textContent = `${matches.length}${matches.length >= MAX_MATCHES || after !== undefined ? "+" : ""} match${matches.length === 1 ? "" : "es"} in ${dir}`;
    list.replaceChildren(
      ...matches.map((c) =>
        h(
          "li",
          {},
          h("a", { href: routeUrl({ view: "tree", key: dir + c.name }) }, dir + c.name),
          c.kind === "index"
            ? ""
            : h("span", { class: "muted" }, ` ${c.kind}: ${preview(valueText(c.kind, c.value), 60)}`),
        ),
      ),
    );
  }
}
