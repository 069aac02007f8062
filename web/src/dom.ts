/** Small DOM helpers: the page is built from plain elements, no framework. */

type Child = Node | string | number | false | null | undefined;
type Attrs = Record<string, string | number | boolean | EventListener | null | undefined>;

/**
 * `h("button", { class: "primary", onclick: save }, "Save")`. Attributes set to `false`, `null` or
 * `undefined` are left out; `on*` functions become event listeners; text children are escaped by
 * construction (they become text nodes), so values from the tree are never parsed as HTML.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "value" && "value" in el) (el as HTMLInputElement).value = String(value);
    else if (name === "checked" && el instanceof HTMLInputElement) el.checked = Boolean(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === false || c === null || c === undefined) continue;
    parent.appendChild(
      typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c,
    );
  }
}

/** Replaces every child of `el`. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing from index.html`);
  return el as T;
}

/** A local date and time for an epoch in milliseconds, e.g. 2026-12-02 17:33:05. */
export function formatTime(ms: number | undefined): string {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Shortens a text for a one-line preview. */
export function preview(text: string, max = 80): string {
  const one = text.replace(/\s+/g, " ");
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
