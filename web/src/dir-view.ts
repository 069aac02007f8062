import { dirs, runDirs } from "../../shared/keys.js";
import { maskSecrets } from "../../tools/mcp/secret-fields.js";
import { type Api, ApiError } from "./api.js";
import { createBulkActions } from "./bulk-actions.js";
import { copyButton } from "./copy.js";
import { confirmDialog, toast } from "./dialogs.js";
import { formatTime, h, preview, replace } from "./dom.js";
import { createKindValueInput } from "./forms.js";
import { parentOf, routeUrl } from "./keys.js";
import { createPages } from "./paging.js";
import { createSelection } from "./selection.js";
import { createTransferSection } from "./transfer-view.js";
import { createTreeOps } from "./tree-ops-api.js";
import { valueText } from "./value-editor.js";
import { breadcrumb, errorText, metaList, type Navigate, recordsVid, type View } from "./view-parts.js";
import { createVisibleCounts } from "./visible-count.js";

const PAGE = 100;

/** A directory: its listing, paged, and its actions. */
export function createDirView(api: Api, key: string, navigate: Navigate): View {
  const el = h("section", { class: "node", "aria-labelledby": "node-title" });
  const tbody = h("tbody");
  const meta = h("div", { class: "dir-meta" });
  const more = h("div", { class: "more" });
  const status = h("p", { class: "notice", role: "status", "aria-live": "polite" });
  const msg = h("p", { class: "error", role: "alert" });
  const pages = createPages(api, key, PAGE);
  let timer: ReturnType<typeof setTimeout> | null = null;
  const ops = createTreeOps(api);
  const counts = createVisibleCounts(api);
  /** The directory's number of children as the tree counts them, when read. */
  let dirCount: number | undefined;
  const bulk = createBulkActions(
    ops,
    key,
    () => selection,
    {
      status: (text) => replace(status, text),
      error: (text) => replace(msg, text),
    },
    { more: () => pages.next !== null, counts, count: () => dirCount },
  );
  const selection = createSelection((n) => bulk.update(n));
  bulk.update(0);
  tbody.addEventListener("keydown", (e) => selection.onKeydown(e));

  async function load(appendPage = false): Promise<void> {
    if (!appendPage) void loadMeta();
    try {
      await pages.load(appendPage);
      renderRows();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        pages.clear();
        replace(
          tbody,
          h(
            "tr",
            {},
            h(
              "td",
              { colspan: 6, class: "muted" },
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
      dirCount = n.count;
      // the bar's "Select all N" says the count now known
      bulk.update(selection.keys().length);
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
      // the entries a listing shows: the tree's count includes hidden system entries
      const entries = meta.querySelector("dd");
      if (entries && n.count !== undefined) counts.show(entries, key, n.count);
    } catch {
      // A missing directory says so in the listing.
      replace(meta);
    }
  }

  function renderRows(): void {
    const { shown, next } = pages;
    selection.shown(shown.map((c) => key + c.name));
    if (!shown.length) replace(tbody, h("tr", {}, h("td", { colspan: 6, class: "muted" }, "(empty)")));
    else
      replace(
        tbody,
        ...shown.map((c, i) => {
          const childKey = key + c.name;
          return h(
            "tr",
            {},
            h("td", { class: "select-cell" }, selection.checkbox(childKey, i)),
            h(
              "td",
              {},
              h("a", { href: routeUrl({ view: "tree", key: childKey }) }, c.name),
              copyButton(childKey),
            ),
            h("td", {}, c.kind),
            h(
              "td",
              { class: "value-cell" },
              c.kind === "index"
                ? `${c.count ?? "?"} entries`
                : preview(valueText(c.kind, maskSecrets(childKey, c.value))),
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
    h("h1", { id: "node-title" }, h("code", {}, key), copyButton(key)),
    meta,
    vid && key === runDirs.records(vid)
      ? h(
          "p",
          { class: "related" },
          h("a", { href: routeUrl({ view: "runs", vid }) }, `Show the records of ${vid} as a table`),
        )
      : null,
    key === dirs.tools
      ? h("p", { class: "related" }, h("a", { href: routeUrl({ view: "tools" }) }, "Open the tools panel"))
      : null,
    status,
    bulk.el,
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
            h("th", { scope: "col", class: "select-cell" }, selection.all),
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
      createTransferSection(ops, key),
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
                  const count = n?.count ?? pages.shown.length + (pages.next !== null ? "+" : "");
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
