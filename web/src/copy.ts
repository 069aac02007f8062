/** Copy-path buttons: a key (or a JSON member's path) to the clipboard, in one click. */
import { toast } from "./dialogs.js";
import { h } from "./dom.js";

/**
 * Writes `text` to the clipboard. The async clipboard needs a secure context (loopback is one);
 * elsewhere a selected hidden text area and `execCommand("copy")` do it.
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { class: "visually-hidden", readonly: true, "aria-hidden": "true" });
    area.value = text;
    document.body.append(area);
    area.select();
    const done = document.execCommand("copy");
    area.remove();
    return done;
  }
}

/** A small button that copies `text`, labelled for screen readers with what it copies. */
export function copyButton(text: string, what = "path"): HTMLButtonElement {
  return h(
    "button",
    {
      type: "button",
      class: "small copy-path",
      title: `Copy the ${what} ${text}`,
      "aria-label": `Copy the ${what} ${text}`,
      "data-copy": text,
      onclick: (e: Event) => {
        e.preventDefault();
        e.stopPropagation();
        void copyText(text).then((ok) =>
          toast(ok ? `Copied ${text}` : `Could not copy; select it instead: ${text}`, ok ? "ok" : "error"),
        );
      },
    },
    "copy",
  );
}
