import type { JsonValue, ValueKind } from "./api.js";
import { h } from "./dom.js";
import { parseJson } from "./exact-json.js";
import { createJsonModes, type JsonModes } from "./json-modes.js";

export type ReadResult = { ok: true; value: JsonValue } | { ok: false; error: string };

export interface ValueEditor {
  el: HTMLElement;
  /** The value as the API takes it, or why it is not valid yet. */
  read(): ReadResult;
  /** True once the user changed something. */
  dirty(): boolean;
  focus(): void;
}

/**
 * An input fitting a kind: a text area for `char/utf8`, a JSON text area validated as you type,
 * a digits-only field for `int64` (a string, so values beyond 2^53 stay exact), a number field
 * for `float64`, a checkbox for `bool`. `onChange` runs after each edit.
 */
export function createValueEditor(
  kind: ValueKind,
  initial: JsonValue | undefined,
  opts: { id: string; label: string; readOnly?: boolean; onChange?: () => void },
): ValueEditor {
  const message = h("p", {
    class: "field-error",
    id: `${opts.id}-error`,
    role: "status",
    "aria-live": "polite",
  });
  let changed = false;
  const touched = () => {
    changed = true;
    check();
    opts.onChange?.();
  };
  let input: HTMLInputElement | HTMLTextAreaElement;
  let read: () => ReadResult;
  let json: JsonModes | null = null;
  /** A one-line field for a number, typed as text (int64s beyond 2^53 stay exact). */
  const numberInput = (inputmode: "numeric" | "decimal") =>
    h("input", {
      type: "text",
      inputmode,
      id: opts.id,
      autocomplete: "off",
      spellcheck: "false",
      value: initial === undefined ? "" : String(initial),
      readonly: opts.readOnly,
      oninput: touched,
    });

  switch (kind) {
    case "bool": {
      const box = h("input", {
        type: "checkbox",
        id: opts.id,
        checked: initial === true,
        disabled: opts.readOnly,
        onchange: touched,
      });
      input = box;
      read = () => ({ ok: true, value: box.checked });
      const el = h(
        "div",
        { class: "value-editor" },
        h("label", { class: "check" }, box, ` ${opts.label} (true when checked)`),
      );
      return { el, read, dirty: () => changed, focus: () => box.focus() };
    }
    case "int64":
      input = numberInput("numeric");
      read = () => {
        const s = input.value.trim();
        if (!/^[-+]?[0-9]+$/.test(s))
          return { ok: false, error: "an int64 is a whole number, e.g. 42 or -7" };
        const big = BigInt(s);
        if (big < -(2n ** 63n) || big > 2n ** 63n - 1n) return { ok: false, error: "out of the int64 range" };
        const n = Number(big);
        return { ok: true, value: Number.isSafeInteger(n) ? n : big.toString() };
      };
      break;
    case "float64":
      input = numberInput("decimal");
      read = () => {
        const s = input.value.trim();
        if (s === "NaN" || s === "Infinity" || s === "-Infinity") return { ok: true, value: s };
        const n = Number(s);
        if (s === "" || !Number.isFinite(n))
          return { ok: false, error: "a float64 is a number, e.g. 3.5, or NaN / Infinity" };
        return { ok: true, value: n };
      };
      break;
    case "json": {
      const text = initial === undefined ? "" : JSON.stringify(initial, null, 2);
      const area = h("textarea", {
        id: opts.id,
        class: "code",
        rows: Math.min(30, Math.max(6, text.split("\n").length + 1)),
        spellcheck: "false",
        readonly: opts.readOnly,
        oninput: touched,
      });
      area.value = text;
      input = area;
      const readText = (): ReadResult => {
        const r = parseJson(area.value);
        return r.ok ? r : { ok: false, error: `not valid JSON: ${r.error}` };
      };
      json = createJsonModes(area, initial ?? null, {
        readOnly: opts.readOnly === true,
        touched,
        readText,
        message,
      });
      read = () => json?.read() ?? readText();
      break;
    }
    default: {
      const text =
        typeof initial === "string" ? initial : initial === undefined ? "" : JSON.stringify(initial);
      input = h("textarea", {
        id: opts.id,
        rows: Math.min(30, Math.max(4, text.split("\n").length + 1)),
        readonly: opts.readOnly,
        oninput: touched,
      });
      input.value = text;
      read = () => ({ ok: true, value: input.value });
    }
  }
  input.setAttribute("aria-describedby", message.id);

  function check(): void {
    const r = read();
    message.textContent = r.ok ? "" : r.error;
    input.setAttribute("aria-invalid", r.ok ? "false" : "true");
  }

  const tools =
    kind === "json" && !opts.readOnly
      ? h(
          "button",
          {
            type: "button",
            class: "small",
            onclick: () => {
              const r = read();
              if (r.ok) {
                input.value = JSON.stringify(r.value, null, 2);
                touched();
              } else check();
            },
          },
          "Format JSON",
        )
      : null;
  const el = h(
    "div",
    { class: "value-editor" },
    h("label", { for: opts.id }, opts.label),
    json?.switcher,
    input,
    json?.tree,
    message,
    tools,
  );
  return { el, read, dirty: () => changed, focus: () => input.focus() };
}

/** The text a value shows as, for previews and diffs. */
export function valueText(kind: string, value: JsonValue | undefined): string {
  if (value === undefined) return "";
  if (kind === "char/utf8" && typeof value === "string") return value;
  if (kind === "json") return JSON.stringify(value, null, 2);
  return String(value);
}
