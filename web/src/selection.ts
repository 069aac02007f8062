/**
 * Rows of a listing picked for a bulk action: a checkbox per row, shift-click picks the range from
 * the last click, and the keyboard works as in a file manager — ↑/↓ move between the rows'
 * checkboxes, Shift+↑/↓ extend the selection, Space toggles, Ctrl+A (⌘A) picks every row shown,
 * Escape clears. The selection is kept by key, so a live refresh of the listing keeps it.
 */
import { h } from "./dom.js";

export interface Selection {
  /** The keys picked, in the listing's order. */
  keys(): string[];
  /** The checkbox of the row at `index` showing `key`. */
  checkbox(key: string, index: number): HTMLInputElement;
  /** The header's checkbox: all rows shown, or none. */
  all: HTMLInputElement;
  /** The listing now shows `keys` (after a load): keys no longer shown are dropped. */
  shown(keys: string[]): void;
  clear(): void;
  /** Keyboard handling for the element holding the rows. */
  onKeydown(e: KeyboardEvent): void;
}

export function createSelection(onChange: (count: number) => void): Selection {
  const picked = new Set<string>();
  let order: string[] = [];
  let boxes: HTMLInputElement[] = [];
  let anchor = -1;

  const all = h("input", {
    type: "checkbox",
    class: "select-all",
    "aria-label": "Select every row shown",
    onchange: () => {
      if (all.checked) for (const k of order) picked.add(k);
      else picked.clear();
      sync();
    },
  });

  function sync(): void {
    boxes.forEach((b, i) => {
      const on = picked.has(order[i] as string);
      b.checked = on;
      b.closest("tr")?.classList.toggle("selected", on);
    });
    all.checked = order.length > 0 && order.every((k) => picked.has(k));
    all.indeterminate = picked.size > 0 && !all.checked;
    onChange(picked.size);
  }

  /** Sets rows `from`..`to` (either order) to `on`. */
  function setRange(from: number, to: number, on: boolean): void {
    const [a, b] = from < to ? [from, to] : [to, from];
    for (let i = a; i <= b; i++) {
      const k = order[i];
      if (k === undefined) continue;
      if (on) picked.add(k);
      else picked.delete(k);
    }
  }

  return {
    all,
    keys: () => order.filter((k) => picked.has(k)),
    checkbox(key, index) {
      const box = h("input", {
        type: "checkbox",
        class: "row-select",
        "aria-label": `Select ${key}`,
        "data-key": key,
        checked: picked.has(key),
        onclick: (e: Event) => {
          const me = e as MouseEvent;
          if (me.shiftKey && anchor >= 0) setRange(anchor, index, box.checked);
          else if (box.checked) picked.add(key);
          else picked.delete(key);
          anchor = index;
          sync();
        },
      });
      boxes[index] = box;
      return box;
    },
    shown(keys) {
      order = keys;
      boxes = boxes.slice(0, keys.length);
      const present = new Set(keys);
      for (const k of [...picked]) if (!present.has(k)) picked.delete(k);
      if (anchor >= keys.length) anchor = -1;
      sync();
    },
    clear() {
      picked.clear();
      anchor = -1;
      sync();
    },
    onKeydown(e) {
      const at = boxes.indexOf(document.activeElement as HTMLInputElement);
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "a") {
        e.preventDefault();
        for (const k of order) picked.add(k);
        sync();
        return;
      }
      if (e.key === "Escape" && picked.size) {
        e.preventDefault();
        picked.clear();
        sync();
        return;
      }
      if (at < 0 || (e.key !== "ArrowDown" && e.key !== "ArrowUp")) return;
      e.preventDefault();
      const next = Math.min(order.length - 1, Math.max(0, at + (e.key === "ArrowDown" ? 1 : -1)));
      if (e.shiftKey) {
        if (anchor < 0) anchor = at;
        // The range from the anchor to the new row is picked; rows beyond it are let go.
        for (const k of order) picked.delete(k);
        setRange(anchor, next, true);
        sync();
      } else anchor = next;
      boxes[next]?.focus();
    },
  };
}
