import { type JsonValue, VALUE_KINDS, type ValueKind } from "./api.js";
import { h, replace } from "./dom.js";
import { createValueEditor, type ValueEditor } from "./value-editor.js";

/** A kind chooser with an input that follows it; used to create and append values. */
export function createKindValueInput(idPrefix: string, initialKind: ValueKind = "char/utf8") {
  let kind: ValueKind = initialKind;
  const slot = h("div");
  let editor: ValueEditor = createValueEditor(kind, undefined, { id: `${idPrefix}-value`, label: "Value" });
  const select = h(
    "select",
    {
      id: `${idPrefix}-kind`,
      onchange: () => {
        kind = select.value as ValueKind;
        editor = createValueEditor(kind, defaultFor(kind), { id: `${idPrefix}-value`, label: "Value" });
        replace(slot, editor.el);
      },
    },
    ...VALUE_KINDS.map((k) => h("option", { value: k, selected: k === kind }, k)),
  );
  replace(slot, editor.el);
  const el = h("div", { class: "kind-value" }, h("label", { for: select.id }, "Kind"), select, slot);
  return {
    el,
    read(): { ok: true; kind: ValueKind; value: JsonValue } | { ok: false; error: string } {
      const r = editor.read();
      return r.ok ? { ok: true, kind, value: r.value } : r;
    },
  };
}

function defaultFor(kind: ValueKind): JsonValue | undefined {
  switch (kind) {
    case "json":
      return {};
    case "bool":
      return false;
    case "int64":
      return 0;
    case "float64":
      return 0;
    default:
      return undefined;
  }
}
