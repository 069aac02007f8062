/**
 * The tools list's rows, virtualized: every row has one fixed height, the list is a scrolling box
 * as tall as all of them would be, and only the rows in view (and a few either side) exist in the
 * DOM — so 5,000 tools cost a few dozen elements, redrawn as the box scrolls.
 *
 * The box is one tab stop, a listbox: the keys of list-keys.ts move its active row through all the
 * rows, not only those drawn — the box scrolls to the row first, so it is drawn, then
 * `aria-activedescendant` names it — and Enter opens the tool.
 */
import { printable } from "../../tools/catalogue/printable.js";
import { h, preview, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { listKey } from "./list-keys.js";
import type { ToolFacts } from "./tool-facts.js";
import type { ToolEntry } from "./tool-parts.js";

/** A row's height in CSS pixels: style.css's `.tool-rows li` says the same. */
export const ROW_HEIGHT = 30;
/** Rows the box shows at most: its height while the list loads too, so nothing below it moves then. */
const VIEW_ROWS = 20;
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
      id: `tool-row-${index}`,
      role: "option",
      "aria-selected": "false",
      "data-tool": entry.name,
      "data-status": entry.status,
      "data-states": facts.states.join(","),
      "aria-posinset": index + 1,
      "aria-setsize": total,
    },
    // not a tab stop of its own: the box is one, its keys reach every row (a click still opens it)
    h(
      "a",
      { href: routeUrl({ view: "tool", name: entry.name }), class: "tool-name", tabindex: -1 },
      entry.name,
    ),
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

/** The box's CSS height for `n` rows (and its border). */
const boxHeight = (n: number): string => `${n * ROW_HEIGHT + 2}px`;

export function createToolRows(): {
  el: HTMLElement;
  show(rows: Row[]): void;
  /** A message in place of the rows (none: the rows show). */
  empty(message: string | null, error?: boolean): void;
} {
  const list = h("ul", { class: "tool-rows", role: "presentation" });
  const message = h("p", { class: "muted", hidden: true });
  const viewport = h(
    "div",
    { id: "tool-list", class: "tool-viewport", tabindex: 0, role: "listbox", "aria-label": "Declared tools" },
    list,
  );
  const el = h("div", {}, message, viewport);
  // as tall as a full list before the tools arrive (its box is `contain: strict`: no height of its own)
  viewport.style.height = boxHeight(VIEW_ROWS);
  let rows: Row[] = [];
  /** The rows in the DOM, by index: a scroll keeps those still in view (a row being clicked stays put). */
  let drawn = new Map<number, HTMLElement>();
  let frame = 0;
  /** The row the keys are on (-1: none yet), kept by tool name across a new list. */
  let active = -1;

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
        if (i === active) mark(el, true);
        if (before) before.after(el);
        else list.prepend(el);
      }
      next.set(i, el);
      before = el;
    }
    drawn = next;
  }

  function mark(el: HTMLElement | undefined, on: boolean): void {
    el?.classList.toggle("active", on);
    el?.setAttribute("aria-selected", String(on));
  }

  /** Row `i` becomes the active one: scrolled into the box, drawn, named by aria-activedescendant. */
  function activate(i: number): void {
    mark(drawn.get(active), false);
    active = i;
    const top = i * ROW_HEIGHT;
    if (top < viewport.scrollTop) viewport.scrollTop = top;
    else if (top + ROW_HEIGHT > viewport.scrollTop + viewport.clientHeight)
      viewport.scrollTop = top + ROW_HEIGHT - viewport.clientHeight;
    // at once, not on the next frame: the row must exist for aria-activedescendant to name it
    draw();
    mark(drawn.get(i), true);
    viewport.setAttribute("aria-activedescendant", `tool-row-${i}`);
  }

  viewport.addEventListener("keydown", (e) => {
    const screenful = Math.max(1, Math.floor(viewport.clientHeight / ROW_HEIGHT) - 1);
    const move = listKey(e, active, rows.length, screenful);
    if (!move) return;
    e.preventDefault();
    if ("open" in move) drawn.get(active)?.querySelector("a")?.click();
    else activate(move.to);
  });
  // the first key lands on the first row in view, not back at the top
  viewport.addEventListener("focus", () => {
    if (active < 0 && rows.length)
      activate(Math.min(rows.length - 1, Math.ceil(viewport.scrollTop / ROW_HEIGHT)));
  });

  viewport.addEventListener("scroll", () => {
    if (!frame) frame = requestAnimationFrame(draw);
  });
  // the box may be resized (a window, a zoom): the rows in view change with it
  new ResizeObserver(() => draw()).observe(viewport);

  return {
    el,
    show(next) {
      const was = rows[active]?.entry.name;
      rows = next;
      active = was === undefined ? -1 : rows.findIndex((r) => r.entry.name === was);
      if (active < 0) viewport.removeAttribute("aria-activedescendant");
      else viewport.setAttribute("aria-activedescendant", `tool-row-${active}`);
      list.style.height = `${rows.length * ROW_HEIGHT}px`;
      // a shorter list than the view: the box shrinks to it
      viewport.style.height = boxHeight(Math.min(rows.length, VIEW_ROWS));
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
