/**
 * A JSON value as a tree to edit: objects and arrays open and close, leaves are edited in place
 * (their type too), members are added and removed, and each member's path can be copied. Numbers
 * stay the text typed until read, so nothing is rounded behind the person's back: an integer
 * beyond 2^53 is refused at read time with the member it is in, as the server would refuse it.
 */
import type { JsonValue } from "./api.js";
import { copyButton } from "./copy.js";
import { h, replace } from "./dom.js";
import { parseJson } from "./exact-json.js";

type Leaf =
  | { type: "string"; value: string }
  | { type: "number"; text: string }
  | { type: "boolean"; value: boolean }
  | { type: "null" };
type Container =
  | { type: "object"; members: Member[]; open: boolean }
  | { type: "array"; items: Node[]; open: boolean };
type Node = Leaf | Container;
interface Member {
  name: string;
  node: Node;
}

const TYPES = ["string", "number", "boolean", "null", "object", "array"] as const;
type NodeType = (typeof TYPES)[number];

/** Containers with more children than this start closed (their members are built when opened). */
const OPEN_MAX = 50;

export type TreeRead = { ok: true; value: JsonValue } | { ok: false; error: string; path: string };

export interface JsonTreeEditor {
  el: HTMLElement;
  read(): TreeRead;
  /** Shows `value` (after a switch from the text editor). */
  set(value: JsonValue): void;
}

export function createJsonTreeEditor(
  initial: JsonValue,
  opts: { readOnly?: boolean; onChange?: () => void } = {},
): JsonTreeEditor {
  let root = toNode(initial, 0);
  const el = h("div", { class: "json-tree", role: "group", "aria-label": "JSON members" });
  const changed = () => opts.onChange?.();

  function render(): void {
    replace(el, h("ul", { class: "json-members" }, renderNode(root, "", null, null)));
  }

  /** One member: `parent` holds it (as `member`, or at array index `index`). */
  function renderNode(
    node: Node,
    path: string,
    label: { member: Member } | { index: number } | null,
    remove: (() => void) | null,
  ): HTMLElement {
    const row = h("div", { class: "json-row" });
    const shownPath = path || ".";
    if (label && "member" in label) {
      const m = label.member;
      row.append(
        opts.readOnly
          ? h("span", { class: "json-name" }, JSON.stringify(m.name))
          : h("input", {
              class: "json-name",
              value: m.name,
              "aria-label": `Name of ${shownPath}`,
              spellcheck: "false",
              oninput: (e: Event) => {
                m.name = (e.target as HTMLInputElement).value;
                changed();
              },
              // the paths below follow the new name
              onchange: () => render(),
            }),
        h("span", { class: "json-colon" }, ":"),
      );
    } else if (label) row.append(h("span", { class: "json-index" }, `${label.index}:`));
    if (!opts.readOnly) {
      const select = h(
        "select",
        {
          class: "json-type",
          "aria-label": `Type of ${shownPath}`,
          onchange: (e: Event) => {
            const next = convert(node, (e.target as HTMLSelectElement).value as NodeType);
            replaceNode(node, next);
            render();
            changed();
          },
        },
        ...TYPES.map((t) => h("option", { value: t, selected: t === node.type ? true : undefined }, t)),
      );
      select.value = node.type;
      row.append(select);
    }
    row.append(leafInput(node, shownPath) ?? summaryOf(node), copyButton(shownPath, "JSON path"));
    if (!opts.readOnly && (node.type === "object" || node.type === "array"))
      row.append(
        h(
          "button",
          {
            type: "button",
            class: "small json-add",
            "aria-label": `Add a member to ${shownPath}`,
            onclick: () => {
              if (node.type === "object")
                node.members.push({ name: freeName(node.members), node: { type: "string", value: "" } });
              else node.items.push({ type: "string", value: "" });
              node.open = true;
              render();
              changed();
            },
          },
          "+ add",
        ),
      );
    if (!opts.readOnly && remove)
      row.append(
        h(
          "button",
          {
            type: "button",
            class: "small danger json-remove",
            "aria-label": `Remove ${shownPath}`,
            onclick: () => {
              remove();
              render();
              changed();
            },
          },
          "remove",
        ),
      );
    const li = h("li", { "data-path": shownPath });
    if (node.type !== "object" && node.type !== "array") {
      row.prepend(h("span", { class: "twisty", "aria-hidden": "true" }));
      li.append(row);
      return li;
    }
    // A container: a twisty opens it; its children are built when it first opens.
    const kids = h("ul", { class: "json-members", hidden: !node.open });
    const fill = () => {
      if (node.type === "object")
        replace(
          kids,
          ...node.members.map((m, i) =>
            renderNode(m.node, path + memberPath(m.name), { member: m }, () => node.members.splice(i, 1)),
          ),
        );
      else
        replace(
          kids,
          ...node.items.map((item, i) =>
            renderNode(item, `${path}[${i}]`, { index: i }, () => node.items.splice(i, 1)),
          ),
        );
    };
    const twisty = h(
      "button",
      {
        type: "button",
        class: "twisty",
        "aria-label": `${node.open ? "Collapse" : "Expand"} ${shownPath}`,
        "aria-expanded": String(node.open),
        onclick: () => {
          node.open = !node.open;
          kids.hidden = !node.open;
          twisty.textContent = node.open ? "▾" : "▸";
          twisty.setAttribute("aria-expanded", String(node.open));
          twisty.setAttribute("aria-label", `${node.open ? "Collapse" : "Expand"} ${shownPath}`);
          if (node.open && !kids.firstChild) fill();
        },
      },
      node.open ? "▾" : "▸",
    );
    row.prepend(twisty);
    if (node.open) fill();
    li.append(row, kids);
    return li;
  }

  function leafInput(node: Node, path: string): HTMLElement | null {
    const ro = opts.readOnly;
    switch (node.type) {
      case "string":
        return h("input", {
          class: "json-value",
          value: node.value,
          readonly: ro,
          "aria-label": `Value of ${path}`,
          spellcheck: "false",
          oninput: (e: Event) => {
            node.value = (e.target as HTMLInputElement).value;
            changed();
          },
        });
      case "number": {
        const input = h("input", {
          class: "json-value mono",
          inputmode: "decimal",
          value: node.text,
          readonly: ro,
          "aria-label": `Value of ${path}`,
          spellcheck: "false",
          oninput: () => {
            node.text = input.value;
            input.setAttribute("aria-invalid", String(numberError(node.text) !== null));
            changed();
          },
        });
        return input;
      }
      case "boolean":
        return h(
          "label",
          { class: "check" },
          h("input", {
            type: "checkbox",
            checked: node.value,
            disabled: ro,
            "aria-label": `Value of ${path}`,
            onchange: (e: Event) => {
              node.value = (e.target as HTMLInputElement).checked;
              changed();
            },
          }),
          " true",
        );
      case "null":
        return h("span", { class: "muted" }, "null");
      default:
        return null;
    }
  }

  /** Puts `next` where `old` is in the tree (a type change). */
  function replaceNode(old: Node, next: Node): void {
    if (old === root) {
      root = next;
      return;
    }
    const walk = (n: Node): boolean => {
      if (n.type === "object") {
        const m = n.members.find((x) => x.node === old);
        if (m) {
          m.node = next;
          return true;
        }
        return n.members.some((x) => walk(x.node));
      }
      if (n.type === "array") {
        const i = n.items.indexOf(old);
        if (i >= 0) {
          n.items[i] = next;
          return true;
        }
        return n.items.some(walk);
      }
      return false;
    };
    walk(root);
  }

  render();
  return {
    el,
    read: () => readNode(root, ""),
    set(value) {
      root = toNode(value, 0);
      render();
    },
  };
}

/** The editable form of a value; containers near the top with few members start open. */
function toNode(v: JsonValue, depth: number): Node {
  if (v === null) return { type: "null" };
  if (typeof v === "string") return { type: "string", value: v };
  if (typeof v === "number") return { type: "number", text: String(v) };
  if (typeof v === "boolean") return { type: "boolean", value: v };
  if (Array.isArray(v))
    return {
      type: "array",
      items: v.map((x) => toNode(x, depth + 1)),
      open: depth < 3 && v.length <= OPEN_MAX,
    };
  const members = Object.entries(v).map(([name, x]) => ({ name, node: toNode(x, depth + 1) }));
  return { type: "object", members, open: depth < 3 && members.length <= OPEN_MAX };
}

/** A member's value as another type, keeping what can be kept (text, a number's digits). */
function convert(node: Node, type: NodeType): Node {
  const text =
    node.type === "string"
      ? node.value
      : node.type === "number"
        ? node.text
        : node.type === "boolean"
          ? String(node.value)
          : "";
  switch (type) {
    case "string":
      return { type, value: text };
    case "number":
      return { type, text: numberError(text) === null ? text : "0" };
    case "boolean":
      return { type, value: text === "true" };
    case "null":
      return { type };
    case "object":
      return { type, members: [], open: true };
    case "array":
      return { type, items: [], open: true };
  }
}

function readNode(node: Node, path: string): TreeRead {
  const at = path || ".";
  switch (node.type) {
    case "string":
    case "boolean":
      return { ok: true, value: node.value };
    case "null":
      return { ok: true, value: null };
    case "number": {
      const why = numberError(node.text);
      if (why) return { ok: false, error: `${at}: ${why}`, path: at };
      return { ok: true, value: Number(node.text.trim()) };
    }
    case "array": {
      const out: JsonValue[] = [];
      for (const [i, item] of node.items.entries()) {
        const r = readNode(item, `${path}[${i}]`);
        if (!r.ok) return r;
        out.push(r.value);
      }
      return { ok: true, value: out };
    }
    case "object": {
      const out: Record<string, JsonValue> = {};
      for (const m of node.members) {
        if (Object.hasOwn(out, m.name))
          return { ok: false, error: `${at}: the member ${JSON.stringify(m.name)} is given twice`, path: at };
        const r = readNode(m.node, path + memberPath(m.name));
        if (!r.ok) return r;
        out[m.name] = r.value;
      }
      return { ok: true, value: out };
    }
  }
}

/** Why `text` is not a JSON number the tree keeps exactly, or null. */
function numberError(text: string): string | null {
  const t = text.trim();
  const r = parseJson(t);
  if (r.ok && typeof r.value === "number") return null;
  if (!r.ok && /beyond 2\^53/.test(r.error)) return r.error.replace(/^line 1, column \d+: /, "");
  return `${JSON.stringify(t)} is not a JSON number (e.g. 42, -1.5, 2e10)`;
}

/** `.name`, or `["odd name"]` when it is not an identifier (jq's path syntax). */
function memberPath(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

function freeName(members: Member[]): string {
  for (let i = 1; ; i++) {
    const name = i === 1 ? "new" : `new${i}`;
    if (!members.some((m) => m.name === name)) return name;
  }
}

function summaryOf(node: Node): HTMLElement {
  const n = node.type === "object" ? node.members.length : node.type === "array" ? node.items.length : 0;
  const text =
    node.type === "object" ? `{${n} member${n === 1 ? "" : "s"}}` : `[${n} item${n === 1 ? "" : "s"}]`;
  return h("span", { class: "muted json-summary" }, text);
}
