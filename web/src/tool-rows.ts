/**
 * The tools list's rows, virtualized: every row has one fixed height, the list is a scrolling box
 * as tall as all of them would be, and only the rows in view (and a few either side) exist in the
 * DOM — so 5,000 tools cost a few dozen elements, redrawn as the box scrolls.
 */
import { printable } from "../../tools/catalogue/printable.js";
import { h, preview, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import type { ToolFacts } from "./tool-facts.js";
import type { ToolEntry } from "./tool-parts.js";

/** A row's height in CSS pixels: style.css's `.tool-rows li` says the same. */
export const ROW_HEIGHT = 30;
/** Rows drawn beyond each edge of the view, so a quick scroll shows no gap. */
const OVERSCAN = 8;

export interface Row {
  entry: ToolEntry;
  facts: ToolFacts;
}

/** The state badges worth a glance in a row (enabled is the normal case and says nothing). */
const FLAGGED = new Set([
  "disabled",
  "needs approval",
  "held for review",
  "not accepted",
  "blocked",
  "invalid",
]);

function rowEl(row: Row, index: number, total: number): HTMLElement {
  const { entry, facts } = row;
  const t = entry.tool;
  const what = t ? (t.snippet ?? t.description) : (entry.problems[0] ?? "invalid");
  const li = h(
    "li",
    {
      "data-tool": entry.name,
      "data-status": entry.status,
      "data-states": facts.states.join(","),
      "aria-posinset": index + 1,
      "aria-setsize": total,
    },
    h("a", { href: routeUrl({ view: "tool", name: entry.name }), class: "tool-name" }, entry.name),
    h("span", { class: "kind-badge", title: "kind" }, facts.kind),
    ...facts.states
      .filter((s) => FLAGGED.has(s))
      .map((s) => h("span", { class: `kind-badge state-${s.replaceAll(" ", "-")}` }, s)),
    facts.owner.person ? null : h("span", { class: "tool-owner" }, printable(`run ${facts.owner.vid}`)),
    facts.server ? h("span", { class: "tool-owner" }, printable(`server ${facts.server}`)) : null,
    h(
      "span",
      { class: t ? "tool-what" : "tool-what problems", title: t ? what : entry.problems.join("\n") },
      printable(preview(what, 200)),
    ),
  );
  // through the CSSOM: the page's content security policy refuses style attributes
  li.style.top = `${index * ROW_HEIGHT}px`;
  return li;
}

export function createToolRows(): {
  el: HTMLElement;
  show(rows: Row[]): void;
  /** A message in place of the rows (none: the rows show). */
  empty(message: string | null, error?: boolean): void;
} {
  const list = h("ul", { class: "tool-rows", "aria-label": "Declared tools" });
  const message = h("p", { class: "muted", hidden: true });
  const viewport = h("div", { id: "tool-list", class: "tool-viewport", tabindex: 0 }, list);
  const el = h("div", {}, message, viewport);
  let rows: Row[] = [];
  /** The rows in the DOM, by index: a scroll keeps those still in view (a row being clicked stays put). */
  let drawn = new Map<number, HTMLElement>();
  let frame = 0;

  function draw(): void {
    frame = 0;
    const height = viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((viewport.scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
    const next = new Map<number, HTMLElement>();
    for (const [i, el] of drawn) if (i < first || i >= last) el.remove();
    // rows in document order (what a screen reader reads): a new row goes right after the one before it
    let before: HTMLElement | undefined;
    for (let i = first; i < last; i++) {
      let el = drawn.get(i);
      if (!el) {
        el = rowEl(rows[i] as Row, i, rows.length);
        if (before) before.after(el);
        else list.prepend(el);
      }
      next.set(i, el);
      before = el;
    }
    drawn = next;
  }

  viewport.addEventListener("scroll", () => {
    if (!frame) frame = requestAnimationFrame(draw);
  });
  // the box may be resized (a window, a zoom): the rows in view change with it
  new ResizeObserver(() => draw()).observe(viewport);

  return {
    el,
    show(next) {
      rows = next;
      list.style.height = `${rows.length * ROW_HEIGHT}px`;
      // a shorter list than the view: the box shrinks to it
      viewport.style.height = `${Math.min(rows.length, 20) * ROW_HEIGHT + 2}px`;
      if (viewport.scrollTop > rows.length * ROW_HEIGHT) viewport.scrollTop = 0;
      replace(list);
      drawn = new Map();
      draw();
    },
    empty(text, error = false) {
      message.hidden = text === null;
      message.className = error ? "error" : "muted";
      message.textContent = text ?? "";
      viewport.hidden = text !== null;
    },
  };
}
