import type { JsonValue } from "./api.js";
import { h } from "./dom.js";

/** The subset of JSON Schema a form is built from; anything else gets a JSON text field. */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: JsonValue[];
  items?: JsonSchema;
  default?: JsonValue;
  minimum?: number;
  maximum?: number;
  title?: string;
}

type FieldRead = { ok: true; value: JsonValue | undefined } | { ok: false; error: string };

interface Field {
  name: string;
  el: HTMLElement;
  read(): FieldRead;
}

/** Names whose text is usually long: they get a text area. */
const LONG_TEXT = /text|content|body|patch|script|prompt|command|old|new|code|query|pattern/i;

/**
 * A form for a tool's `params` (an object schema): one labelled field per property — text,
 * number, checkbox, select for enums, one-per-line lists for string arrays, JSON for the rest.
 * Empty optional fields are left out of the arguments; the server validates them for real.
 */
export function createSchemaForm(schema: JsonSchema, idPrefix: string) {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const fields: Field[] = Object.entries(props).map(([name, s]) =>
    field(name, s, required.has(name), `${idPrefix}-${name}`),
  );
  const raw = h("textarea", { id: `${idPrefix}-raw`, class: "code", rows: 6, spellcheck: "false" });
  const useRaw = h("input", { type: "checkbox", id: `${idPrefix}-use-raw` });
  const fieldset = h("fieldset", { class: "schema-fields" }, h("legend", {}, "Arguments"));
  for (const f of fields) fieldset.append(f.el);
  if (!fields.length) fieldset.append(h("p", { class: "muted" }, "This tool takes no arguments."));
  useRaw.addEventListener("change", () => {
    fieldset.disabled = useRaw.checked;
    if (useRaw.checked) {
      const r = read(false);
      raw.value = JSON.stringify(r.ok ? r.value : {}, null, 2);
    }
  });
  const el = h(
    "div",
    { class: "schema-form" },
    fieldset,
    h(
      "details",
      {},
      h("summary", {}, "Arguments as JSON"),
      h("label", { class: "check" }, useRaw, " Send this JSON instead of the fields"),
      raw,
    ),
  );

  function read(
    allowRaw = true,
  ): { ok: true; value: Record<string, JsonValue> } | { ok: false; error: string } {
    if (allowRaw && useRaw.checked) {
      try {
        const v = JSON.parse(raw.value) as JsonValue;
        return v && typeof v === "object" && !Array.isArray(v)
          ? { ok: true, value: v }
          : { ok: false, error: "the arguments must be a JSON object" };
      } catch (err) {
        return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
      }
    }
    const out: Record<string, JsonValue> = {};
    for (const f of fields) {
      const r = f.read();
      if (!r.ok) return { ok: false, error: `${f.name}: ${r.error}` };
      if (r.value !== undefined) out[f.name] = r.value;
    }
    return { ok: true, value: out };
  }

  return { el, read: () => read(true) };
}

function typeOf(s: JsonSchema): string {
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
  return t ?? (s.properties ? "object" : "any");
}

function field(name: string, s: JsonSchema, required: boolean, id: string): Field {
  const type = typeOf(s);
  const help = s.description ? h("p", { class: "field-help", id: `${id}-help` }, s.description) : null;
  const label = h(
    "label",
    { for: id },
    name,
    required ? h("span", { "aria-hidden": "true" }, " *") : h("span", { class: "muted" }, " (optional)"),
    h("span", { class: "kind-badge" }, type),
  );
  const common = { id, "aria-describedby": help ? `${id}-help` : null, required };
  const wrap = (input: HTMLElement, read: () => FieldRead): Field => ({
    name,
    el: h("div", { class: "field" }, label, help, input),
    read,
  });
  const missing = (): FieldRead =>
    required ? { ok: false, error: "is required" } : { ok: true, value: undefined };

  if (s.enum) {
    const select = h(
      "select",
      common,
      required ? null : h("option", { value: "" }, "(not set)"),
      ...s.enum.map((v, i) =>
        h(
          "option",
          {
            value: String(i),
            selected: s.default !== undefined && JSON.stringify(s.default) === JSON.stringify(v),
          },
          String(v),
        ),
      ),
    );
    return wrap(select, () =>
      select.value === "" ? missing() : { ok: true, value: s.enum?.[Number(select.value)] ?? null },
    );
  }
  switch (type) {
    case "string": {
      const input = LONG_TEXT.test(name)
        ? h("textarea", { ...common, rows: 3, spellcheck: "false" })
        : h("input", { ...common, type: "text", autocomplete: "off", spellcheck: "false" });
      if (typeof s.default === "string") input.placeholder = s.default;
      return wrap(input, () => (input.value === "" ? missing() : { ok: true, value: input.value }));
    }
    case "integer":
    case "number": {
      const input = h("input", {
        ...common,
        type: "number",
        step: type === "integer" ? 1 : "any",
        min: s.minimum,
        max: s.maximum,
        placeholder: s.default === undefined ? null : String(s.default),
      });
      return wrap(input, () => {
        if (input.value === "") return missing();
        const n = Number(input.value);
        if (!Number.isFinite(n) || (type === "integer" && !Number.isInteger(n)))
          return { ok: false, error: `expects ${type === "integer" ? "a whole number" : "a number"}` };
        return { ok: true, value: n };
      });
    }
    case "boolean": {
      // Three states for an optional flag: not set (the tool's default), true, false.
      const select = h(
        "select",
        common,
        required
          ? null
          : h("option", { value: "" }, `(not set${s.default === undefined ? "" : `: ${String(s.default)}`})`),
        h("option", { value: "true" }, "true"),
        h("option", { value: "false", selected: required }, "false"),
      );
      return wrap(select, () =>
        select.value === "" ? missing() : { ok: true, value: select.value === "true" },
      );
    }
    default: {
      if (type === "array" && s.items && typeOf(s.items) === "string") {
        const area = h("textarea", {
          ...common,
          rows: 3,
          spellcheck: "false",
          placeholder: "one item per line",
        });
        return wrap(area, () => {
          const items = area.value.split("\n").filter((l) => l !== "");
          return items.length === 0 ? missing() : { ok: true, value: items };
        });
      }
      // Other arrays, objects and untyped values are written as JSON.
      const area = h("textarea", {
        ...common,
        rows: 3,
        class: "code",
        spellcheck: "false",
        placeholder: "JSON",
      });
      return wrap(area, () => {
        if (area.value.trim() === "") return missing();
        try {
          return { ok: true, value: JSON.parse(area.value) as JsonValue };
        } catch (err) {
          return { ok: false, error: `not valid JSON: ${(err as Error).message}` };
        }
      });
    }
  }
}
