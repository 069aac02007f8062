import { type Api, ApiError, conflictNode, type Listing, type ValueNode } from "./api.js";
import { confirmDialog, toast } from "./dialogs.js";
import { diffLines } from "./diff.js";
import { formatTime, h, preview, replace } from "./dom.js";
import { createKindValueInput } from "./forms.js";
import { createHistorySection } from "./history-view.js";
import { ancestors, isDir, nameOf, parentOf, type Route, routeUrl } from "./keys.js";
import { createValueEditor, type ValueEditor, valueText } from "./value-editor.js";
import type { Change } from "./watch.js";

/** What the main area shows; views hear about live changes while they are on screen. */
export interface View {
  el: HTMLElement;
  onChanges?(changes: Change[]): void;
  /** The watch lost its place: re-read everything. */
  reload?(): void;
}

export type Navigate = (route: Route) => void;

const PAGE = 100;

/** The main area for a tree node: a directory's listing and actions, or a value's editor. */
export function createNodeView(api: Api, key: string, navigate: Navigate): View {
  return isDir(key) ? createDirView(api, key, navigate) : createValueView(api, key, navigate);
}

export function breadcrumb(key: string): HTMLElement {
  const chain = [...ancestors(key), ...(key === "/" ? [] : [key])];
  return h(
    "nav",
    { "aria-label": "Breadcrumb", class: "breadcrumb" },
    h(
      "ol",
      {},
      ...chain.map((k, i) =>
        h(
          "li",
          {},
          i === chain.length - 1
            ? h("span", { "aria-current": "location" }, nameOf(k))
            : h("a", { href: routeUrl({ view: "tree", key: k }) }, nameOf(k)),
        ),
      ),
    ),
  );
}

function metaList(entries: Array<[string, string]>): HTMLElement {
  return h("dl", { class: "meta" }, ...entries.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function errorText(err: unknown): string {
  return err instanceof ApiError ? `${err.message} (${err.code})` : (err as Error).message;
}

/** The run (`vid`) whose records a key belongs to, if it is under /byteseek/tool/<vid>/. */
function recordsVid(key: string): string | undefined {
  return /^\/byteseek\/tool\/([^/]+)\//.exec(key)?.[1];
}

function createValueView(api: Api, key: string, navigate: Navigate): View {
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

  function render(n: ValueNode): void {
    editor = createValueEditor(n.kind, n.value, {
      id: "value-input",
      label: n.ro ? `Value (${n.kind}, read-only)` : `Value (${n.kind})`,
      readOnly: n.ro,
      onChange: () => {
        save.disabled = !editor?.read().ok;
      },
    });
    const save = h("button", { type: "submit", class: "primary", id: "save", disabled: n.ro }, "Save");
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
        ? h("p", { class: "muted" }, "This key is read-only (ro): it is shown, not edited here.")
        : h(
            "div",
            { class: "actions" },
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
    const tool = /^\/byteseek\/tools\/([^/]+)$/.exec(key)?.[1];
    replace(
      el,
      breadcrumb(key),
      h("h1", { id: "node-title" }, h("code", {}, key)),
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
        `Delete the value ${key} (version ${node.version})? Where versions are kept (by default under /byteseek/), its history keeps this one.`,
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

/** A rendered diff: removed lines marked `-`, added `+`. */
export function diffBlock(lines: ReturnType<typeof diffLines>): HTMLElement {
  if (lines.every((l) => l.op === " ")) return h("p", { class: "muted" }, "(no difference)");
  return h(
    "pre",
    { class: "diff" },
    ...lines.map((l) =>
      h("span", { class: l.op === "+" ? "add" : l.op === "-" ? "del" : "same" }, `${l.op} ${l.text}\n`),
    ),
  );
}

function createDirView(api: Api, key: string, navigate: Navigate): View {
  const el = h("section", { class: "node", "aria-labelledby": "node-title" });
  const tbody = h("tbody");
  const meta = h("div", { class: "dir-meta" });
  const more = h("div", { class: "more" });
  const status = h("p", { class: "notice", role: "status", "aria-live": "polite" });
  const msg = h("p", { class: "error", role: "alert" });
  let shown: Listing["children"] = [];
  let next: string | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  async function load(appendPage = false): Promise<void> {
    if (!appendPage) void loadMeta();
    try {
      const page =
        appendPage && next !== null
          ? await api.list(key, { limit: PAGE, after: next })
          : await api.list(key, { limit: Math.max(PAGE, shown.length) });
      shown = appendPage ? [...shown, ...page.children] : page.children;
      next = page.next ?? null;
      renderRows();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        shown = [];
        next = null;
        replace(
          tbody,
          h(
            "tr",
            {},
            h(
              "td",
              { colspan: 5, class: "muted" },
              "This directory does not exist (yet): create a key in it below.",
            ),
          ),
        );
        replace(more);
        return;
      }
      replace(msg, errorText(err));
    }
  }

  async function loadMeta(): Promise<void> {
    try {
      const n = await api.dirNode(key);
      replace(
        meta,
        metaList([
          ["entries", String(n.count ?? "?")],
          ["version", String(n.version)],
          ["created at revision", String(n.createRev)],
          ["modified at revision", String(n.modRev)],
          ["modified", formatTime(n.mtime)],
        ]),
      );
    } catch {
      // A missing directory says so in the listing.
      replace(meta);
    }
  }

  function renderRows(): void {
    if (!shown.length) replace(tbody, h("tr", {}, h("td", { colspan: 5, class: "muted" }, "(empty)")));
    else
      replace(
        tbody,
        ...shown.map((c) => {
          const childKey = key + c.name;
          return h(
            "tr",
            {},
            h("td", {}, h("a", { href: routeUrl({ view: "tree", key: childKey }) }, c.name)),
            h("td", {}, c.kind),
            h(
              "td",
              { class: "value-cell" },
              c.kind === "index" ? `${c.count ?? "?"} entries` : preview(valueText(c.kind, c.value)),
            ),
            h("td", { class: "num" }, c.version !== undefined ? String(c.version) : ""),
            h("td", {}, formatTime(c.mtime)),
          );
        }),
      );
    replace(
      more,
      next !== null
        ? h("button", { type: "button", onclick: () => void load(true) }, `Load more (after ${next})`)
        : null,
    );
  }

  const newKey = createKindValueInput("new-key");
  const newName = h("input", {
    id: "new-key-name",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
  });
  const newDirName = h("input", {
    id: "new-dir-name",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
  });
  const appendInput = createKindValueInput("append");

  async function act(what: () => Promise<void>): Promise<void> {
    replace(msg);
    try {
      await what();
    } catch (err) {
      replace(msg, errorText(err));
    }
  }

  const vid = recordsVid(key);
  replace(
    el,
    breadcrumb(key),
    h("h1", { id: "node-title" }, h("code", {}, key)),
    meta,
    vid && key === `/byteseek/tool/${vid}/`
      ? h(
          "p",
          { class: "related" },
          h("a", { href: routeUrl({ view: "runs", vid }) }, `Show the records of ${vid} as a table`),
        )
      : null,
    key === "/byteseek/tools/"
      ? h("p", { class: "related" }, h("a", { href: routeUrl({ view: "tools" }) }, "Open the tools panel"))
      : null,
    status,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "listing" },
        h("caption", { class: "visually-hidden" }, `Children of ${key}`),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", { scope: "col" }, "Name"),
            h("th", { scope: "col" }, "Kind"),
            h("th", { scope: "col" }, "Value"),
            h("th", { scope: "col" }, "Version"),
            h("th", { scope: "col" }, "Modified"),
          ),
        ),
        tbody,
      ),
    ),
    more,
    msg,
    h(
      "div",
      { class: "dir-actions" },
      h(
        "details",
        {},
        h("summary", {}, "New key"),
        h(
          "form",
          {
            id: "new-key-form",
            onsubmit: (e: Event) => {
              e.preventDefault();
              const r = newKey.read();
              if (!r.ok) return;
              const child = key + newName.value.trim();
              void act(async () => {
                await api.put(child, { kind: r.kind, value: r.value }, { create: true });
                toast(`Created ${child}`);
                navigate({ view: "tree", key: child });
              });
            },
          },
          h("label", { for: newName.id }, "Name"),
          newName,
          newKey.el,
          h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create key")),
        ),
      ),
      h(
        "details",
        {},
        h("summary", {}, "New directory"),
        h(
          "form",
          {
            id: "new-dir-form",
            onsubmit: (e: Event) => {
              e.preventDefault();
              const child = `${key}${newDirName.value.trim().replace(/\/+$/, "")}/`;
              void act(async () => {
                await api.mkdir(child);
                toast(`Created ${child}`);
                navigate({ view: "tree", key: child });
              });
            },
          },
          h("label", { for: newDirName.id }, "Name"),
          newDirName,
          h(
            "div",
            { class: "actions" },
            h("button", { type: "submit", class: "primary" }, "Create directory"),
          ),
        ),
      ),
      h(
        "details",
        {},
        h("summary", {}, "Append"),
        h(
          "form",
          {
            id: "append-form",
            onsubmit: (e: Event) => {
              e.preventDefault();
              const r = appendInput.read();
              if (!r.ok) return;
              void act(async () => {
                const added = await api.append(key, { kind: r.kind, value: r.value });
                toast(`Appended ${added}`);
                replace(status, `Appended ${added}`);
              });
            },
          },
          h("p", { class: "muted" }, `Adds the next numbered child of ${key} (0, 1, 2, …).`),
          appendInput.el,
          h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Append")),
        ),
      ),
      key === "/"
        ? null
        : h(
            "button",
            {
              type: "button",
              class: "danger",
              id: "deltree",
              onclick: () =>
                void act(async () => {
                  const n = await api.dirNode(key).catch(() => null);
                  const count = n?.count ?? shown.length + (next !== null ? "+" : "");
                  const ok = await confirmDialog(
                    `Delete ${key}?`,
                    `Delete the directory ${key} and everything under it (${count} direct children)? This cannot be undone.`,
                    "Delete everything",
                  );
                  if (!ok) return;
                  const r = await api.del(key);
                  toast(`Deleted ${key} (${(r as { removed?: number }).removed ?? "all"} keys)`);
                  navigate({ view: "tree", key: parentOf(key) });
                }),
            },
            "Delete directory…",
          ),
    ),
  );

  void load();

  return {
    el,
    reload: () => void load(),
    onChanges(changes) {
      const relevant = changes.some(
        (c) => c.key.startsWith(key) || (c.type === "deltree" && key.startsWith(c.key)),
      );
      if (!relevant || timer) return;
      timer = setTimeout(() => {
        timer = null;
        void load();
      }, 50);
    },
  };
}
