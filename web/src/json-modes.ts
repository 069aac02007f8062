/**
 * A json value's two editors: the text (a text area, validated as you type) and the tree
 * (json-tree-editor.ts). Switching carries the value across; text that does not parse cannot be
 * switched to the tree, and the message says where it is wrong.
 */
import type { JsonValue } from "./api.js";
import { h } from "./dom.js";
import { createJsonTreeEditor } from "./json-tree-editor.js";
import type { ReadResult } from "./value-editor.js";

export interface JsonModes {
  /** The "Text | Tree" buttons. */
  switcher: HTMLElement;
  /** Where the tree editor shows (hidden in text mode). */
  tree: HTMLElement;
  read(): ReadResult;
}

export function createJsonModes(
  area: HTMLTextAreaElement,
  initial: JsonValue,
  opts: {
    readOnly: boolean;
    touched(): void;
    readText(): ReadResult;
    message: HTMLElement;
  },
): JsonModes {
  let mode: "text" | "tree" = "text";
  const editor = createJsonTreeEditor(initial, { readOnly: opts.readOnly, onChange: opts.touched });
  const tree = h("div", { class: "json-tree-wrap", id: `${area.id}-tree`, hidden: true }, editor.el);
  const textButton = h(
    "button",
    {
      type: "button",
      class: "small",
      id: `${area.id}-mode-text`,
      "aria-pressed": "true",
      onclick: () => show("text"),
    },
    "Text",
  );
  const treeButton = h(
    "button",
    {
      type: "button",
      class: "small",
      id: `${area.id}-mode-tree`,
      "aria-pressed": "false",
      onclick: () => show("tree"),
    },
    "Tree",
  );

  function show(next: "text" | "tree"): void {
    if (next === mode) return;
    if (next === "tree") {
      const r = opts.readText();
      if (!r.ok) {
        opts.message.textContent = `${r.error} — fix it to open the tree`;
        area.focus();
        return;
      }
      editor.set(r.value);
    } else {
      const r = editor.read();
      if (!r.ok) {
        opts.message.textContent = r.error;
        return;
      }
      area.value = JSON.stringify(r.value, null, 2);
    }
    mode = next;
    area.hidden = mode === "tree";
    tree.hidden = mode === "text";
    textButton.setAttribute("aria-pressed", String(mode === "text"));
    treeButton.setAttribute("aria-pressed", String(mode === "tree"));
    opts.message.textContent = "";
  }

  return {
    switcher: h(
      "div",
      { class: "json-modes", role: "group", "aria-label": "Edit as" },
      textButton,
      treeButton,
    ),
    tree,
    read(): ReadResult {
      if (mode === "text") return opts.readText();
      const r = editor.read();
      return r.ok ? r : { ok: false, error: `not valid: ${r.error}` };
    },
  };
}
