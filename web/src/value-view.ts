import { childOf, dirs, keys } from "../../shared/keys.js";
import { maskSecrets } from "../../tools/mcp/secret-fields.js";
import { type Api, ApiError, conflictNode, type ValueNode } from "./api.js";
import { copyButton } from "./copy.js";
import { confirmDialog, toast } from "./dialogs.js";
import { diffLines } from "./diff.js";
import { formatTime, h, replace } from "./dom.js";
import { createKindValueInput } from "./forms.js";
import { createHistorySection } from "./history-view.js";
import { parentOf, routeUrl } from "./keys.js";
import { createValueEditor, type ValueEditor, valueText } from "./value-editor.js";
import {
  breadcrumb,
  diffBlock,
  errorText,
  metaList,
  type Navigate,
  recordsVid,
  type View,
} from "./view-parts.js";
import type { Change } from "./watch.js";

/** A value: its editor, flags, history and actions. */
export function createValueView(api: Api, key: string, navigate: Navigate): View {
  const el = h("section", { class: "node", "aria-labelledby": "node-title" });
  let node: ValueNode | null = null;
  let editor: ValueEditor | null = null;
  const notice = h("div", { class: "notice", role: "status", "aria-live": "polite" });
  const conflict = h("div", { class: "conflict", role: "alert" });
  let history: ReturnType<typeof createHistorySection> | null = null;

  async function load(): Promise<void> {
    try {
      node = await api.get(key);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return renderMissing();
      replace(
        el,
        breadcrumb(key),
        h("h1", { id: "node-title" }, key),
        h("p", { class: "error" }, errorText(err)),
      );
      return;
    }
    render(node);
  }

  // A registry entry's secret fields (headers, env) are shown masked until the person reveals them.
  let revealed = false;

  function render(n: ValueNode): void {
    const shown = revealed ? n.value : maskSecrets(n.key, n.value);
    const masked = shown !== n.value;
    editor = createValueEditor(n.kind, shown, {
      id: "value-input",
      label: n.ro ? `Value (${n.kind}, read-only)` : `Value (${n.kind}${masked ? ", secrets masked" : ""})`,
      readOnly: n.ro || masked,
      onChange: () => {
        save.disabled = !editor?.read().ok;
      },
    });
    const save = h(
      "button",
      { type: "submit", class: "primary", id: "save", disabled: n.ro || masked },
      "Save",
    );
    const reveal = masked
      ? h(
          "button",
          {
            type: "button",
            id: "reveal-secrets",
            onclick: () => {
              revealed = true;
              render(n);
            },
          },
          "Reveal secrets",
        )
      : null;
    const form = h(
      "form",
      {
        class: "edit",
        onsubmit: (e: Event) => {
          e.preventDefault();
          void doSave();
        },
      },
      editor.el,
      conflict,
      n.ro
        ? h(
            "p",
            { class: "muted", id: "ro-note" },
            "This key is read-only (ro): it is shown, not edited here. Change it with ",
            h("code", {}, `kvspace set ${n.key} '${n.kind}:…' ro --force`),
            n.key === keys.policy ? " (docs/TOOLS.md, “Changing the policy”)." : ".",
          )
        : h(
            "div",
            { class: "actions" },
            reveal,
            save,
            h("button", { type: "button", onclick: () => void load() }, "Revert"),
            h("button", { type: "button", class: "danger", onclick: () => void doDelete() }, "Delete…"),
          ),
    );
    replace(conflict);
    replace(notice);
    history = createHistorySection(api, key, () => node, {
      restored: () => void load(),
      open: history?.el.open ?? false,
    });
    const vid = recordsVid(key);
    const tool = childOf(dirs.tools, key);
    replace(
      el,
      breadcrumb(key),
      h("h1", { id: "node-title" }, h("code", {}, key), copyButton(key)),
      metaList([
        ["kind", n.kind],
        ["version", String(n.version)],
        ["created at revision", String(n.createRev)],
        ["modified at revision", String(n.modRev)],
        ["modified", formatTime(n.mtime)],
        ["read-only", n.ro ? "yes" : "no"],
        ...(n.vid ? ([["owner vid", n.vid]] as Array<[string, string]>) : []),
      ]),
      tool || vid
        ? h(
            "p",
            { class: "related" },
            tool
              ? h("a", { href: routeUrl({ view: "tool", name: decodeURIComponent(tool) }) }, `Call ${tool}`)
              : null,
            vid ? h("a", { href: routeUrl({ view: "runs", vid }) }, `All records of ${vid}`) : null,
          )
        : null,
      notice,
      form,
      history.el,
    );
  }

  async function doSave(overwriteVersion?: number): Promise<void> {
    if (!node || !editor) return;
    const r = editor.read();
    if (!r.ok) {
      editor.focus();
      return;
    }
    const base = overwriteVersion ?? node.version;
    try {
      const w = await api.put(key, { kind: node.kind, value: r.value }, { ifMatch: base });
      toast(`Saved ${key}: version ${w.version ?? "?"}`);
      await load();
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) return showConflict(err, r.value, node.kind);
      replace(conflict, h("p", { class: "error" }, `Not saved: ${errorText(err)}`));
    }
  }

  async function showConflict(
    err: ApiError,
    mine: ValueNode["value"],
    kind: ValueNode["kind"],
  ): Promise<void> {
    let theirs = conflictNode(err);
    if (!theirs) theirs = await api.get(key).catch(() => undefined);
    const yours = node?.version ?? 0;
    if (!theirs) {
      replace(
        conflict,
        h("h2", {}, "Conflict"),
        h("p", {}, `Not saved: while you edited version ${yours}, someone else deleted ${key}.`),
        h(
          "div",
          { class: "actions" },
          h(
            "button",
            { type: "button", onclick: () => void recreate(kind, mine) },
            "Create it again with my value",
          ),
        ),
      );
      return;
    }
    const other = theirs;
    const lines = diffLines(valueText(other.kind, other.value), valueText(kind, mine));
    replace(
      conflict,
      h("h2", {}, "Conflict: someone else saved first"),
      h(
        "p",
        { id: "conflict-message" },
        `Not saved. You were editing version ${yours} of ${key}, but it is now version ${other.version}` +
          ` (saved ${formatTime(other.mtime)}). Your text is still in the editor.`,
      ),
      h("h3", {}, `Their value (version ${other.version})`),
      h("pre", { class: "value-block", id: "conflict-theirs" }, valueText(other.kind, other.value)),
      h("h3", {}, "From theirs to yours"),
      diffBlock(lines),
      h(
        "div",
        { class: "actions" },
        h(
          "button",
          { type: "button", class: "danger", onclick: () => void doSave(other.version) },
          `Overwrite version ${other.version} with mine`,
        ),
        h("button", { type: "button", onclick: () => void load() }, "Discard mine, load theirs"),
      ),
    );
  }

  async function recreate(kind: ValueNode["kind"], value: ValueNode["value"]): Promise<void> {
    try {
      await api.put(key, { kind, value }, { create: true });
      await load();
    } catch (err) {
      replace(conflict, h("p", { class: "error" }, errorText(err)));
    }
  }

  async function doDelete(): Promise<void> {
    if (!node) return;
    if (
      !(await confirmDialog(
        `Delete ${key}?`,
        `Delete the value ${key} (version ${node.version})? Where versions are kept (by default under ${dirs.byteseek}), its history keeps this one.`,
        "Delete",
      ))
    )
      return;
    try {
      await api.del(key, { ifMatch: node.version });
      toast(`Deleted ${key}`);
      navigate({ view: "tree", key: parentOf(key) });
    } catch (err) {
      if (err instanceof ApiError && err.status === 412)
        replace(
          conflict,
          h("p", { class: "error" }, `Not deleted: ${key} changed meanwhile. Look at the new version first.`),
        );
      else replace(conflict, h("p", { class: "error" }, `Not deleted: ${errorText(err)}`));
    }
  }

  function renderMissing(): void {
    node = null;
    const input = createKindValueInput("create");
    const msg = h("p", { class: "error", role: "alert" });
    replace(
      el,
      breadcrumb(key),
      h("h1", { id: "node-title" }, h("code", {}, key)),
      h("p", {}, "There is no value at this key (yet)."),
      h(
        "form",
        {
          class: "create",
          onsubmit: async (e: Event) => {
            e.preventDefault();
            const r = input.read();
            if (!r.ok) return;
            try {
              await api.put(key, { kind: r.kind, value: r.value }, { create: true });
              await load();
            } catch (err) {
              replace(msg, errorText(err));
            }
          },
        },
        h("h2", {}, "Create it"),
        input.el,
        msg,
        h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create")),
      ),
    );
  }

  void load();

  return {
    el,
    reload: () => void load(),
    onChanges(changes) {
      const mine = changes.filter(
        (c) => c.key === key || ((c.type === "deltree" || c.type === "delete") && key.startsWith(c.key)),
      );
      if (!mine.length) return;
      const last = mine[mine.length - 1] as Change;
      if (editor?.dirty()) {
        replace(
          notice,
          h(
            "p",
            { class: "warning" },
            last.type === "put"
              ? `Someone else changed this key: it is now version ${last.version ?? "?"}. Saving will show you both versions. `
              : "Someone else deleted this key. ",
            h(
              "button",
              { type: "button", class: "link", onclick: () => void load() },
              "Load the current value (discards your edit)",
            ),
          ),
        );
        history?.refresh();
        return;
      }
      void load().then(() => {
        replace(
          notice,
          h(
            "p",
            { class: "info" },
            last.type === "put" ? `Updated live to version ${last.version ?? "?"}.` : "This key was deleted.",
          ),
        );
      });
    },
  };
}
