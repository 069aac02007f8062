import { dirs } from "../../shared/keys.js";
import { type Api, ApiError, type HistoryEntry, type ValueNode } from "./api.js";
import { toast } from "./dialogs.js";
import { diffLines } from "./diff.js";
import { formatTime, h, preview, replace } from "./dom.js";
import { valueText } from "./value-editor.js";
import { diffBlock } from "./view-parts.js";

/**
 * The retained previous versions of a value (newest first): each with a diff against the
 * current value and a one-click restore, which writes the old value back as a new version
 * (with If-Match, so a restore never silently overwrites a newer write).
 */
export function createHistorySection(
  api: Api,
  key: string,
  current: () => ValueNode | null,
  on: { restored(): void; open?: boolean },
) {
  const body = h("div", { class: "history-body" });
  const el = h("details", { class: "history", id: "history" }, h("summary", {}, "History"), body);
  let loaded = false;

  async function load(): Promise<void> {
    loaded = true;
    let entries: HistoryEntry[];
    try {
      entries = await api.history(key);
    } catch (err) {
      replace(body, h("p", { class: "error" }, (err as Error).message));
      return;
    }
    const cur = current();
    const older = entries.filter((e) => !cur || e.version !== cur.version || e.modRev !== cur.modRev);
    if (!older.length) {
      replace(
        body,
        h(
          "p",
          { class: "muted" },
          `No previous versions are retained. By default only values under ${dirs.byteseek} keep them (the server's BYTESEEK_HISTORY says where).`,
        ),
      );
      return;
    }
    const diffSlot = h("div", { class: "history-diff", "aria-live": "polite" });
    replace(
      body,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "listing" },
          h("caption", { class: "visually-hidden" }, `Previous versions of ${key}`),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Version", "Revision", "Saved", "Value", ""].map((t) => h("th", { scope: "col" }, t)),
            ),
          ),
          h(
            "tbody",
            {},
            ...older.map((e) =>
              h(
                "tr",
                { "data-version": String(e.version) },
                h("td", { class: "num" }, String(e.version), e.deleted ? " (deleted)" : ""),
                h("td", { class: "num" }, String(e.modRev)),
                h("td", {}, formatTime(e.mtime)),
                h("td", { class: "value-cell" }, preview(valueText(e.kind, e.value))),
                h(
                  "td",
                  { class: "row-actions" },
                  h(
                    "button",
                    { type: "button", class: "small", onclick: () => showDiff(e, diffSlot) },
                    `Diff v${e.version}`,
                  ),
                  cur && !cur.ro
                    ? h(
                        "button",
                        { type: "button", class: "small", onclick: () => void restore(e, diffSlot) },
                        `Restore v${e.version}`,
                      )
                    : null,
                ),
              ),
            ),
          ),
        ),
      ),
      compareForm(cur, older, diffSlot),
      diffSlot,
    );
  }

  /** Two pickers over every version (the current one too) and the diff between them. */
  function compareForm(cur: ValueNode | null, older: HistoryEntry[], slot: HTMLElement): HTMLElement {
    const versions: Array<{ label: string; kind: string; value: HistoryEntry["value"] | undefined }> = [
      ...(cur ? [{ label: `current (version ${cur.version})`, kind: cur.kind, value: cur.value }] : []),
      ...older.map((e) => ({
        label: `version ${e.version}${e.deleted ? " (deleted)" : ""}, revision ${e.modRev}`,
        kind: e.kind as string,
        value: e.value,
      })),
    ];
    const picker = (id: string, selected: number) =>
      h(
        "select",
        { id },
        ...versions.map((v, i) =>
          h("option", { value: String(i), selected: i === selected ? true : undefined }, v.label),
        ),
      );
    // The oldest retained against the current: the whole story, until the person picks others.
    const from = picker("diff-from", versions.length - 1);
    const to = picker("diff-to", 0);
    return h(
      "form",
      {
        class: "compare",
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          const a = versions[Number(from.value)];
          const b = versions[Number(to.value)];
          if (!a || !b) return;
          replace(
            slot,
            h("h3", {}, `${a.label} → ${b.label}`),
            diffBlock(diffLines(valueText(a.kind, a.value), valueText(b.kind, b.value))),
          );
        },
      },
      h("label", { for: "diff-from" }, "Compare"),
      from,
      h("label", { for: "diff-to" }, "with"),
      to,
      h("button", { type: "submit", id: "diff-compare" }, "Show the diff"),
    );
  }

  function showDiff(e: HistoryEntry, slot: HTMLElement): void {
    const cur = current();
    replace(
      slot,
      h("h3", {}, `Version ${e.version} → current (version ${cur?.version ?? "?"})`),
      diffBlock(diffLines(valueText(e.kind, e.value), cur ? valueText(cur.kind, cur.value) : "")),
    );
  }

  async function restore(e: HistoryEntry, slot: HTMLElement): Promise<void> {
    const cur = current();
    try {
      const w = await api.put(
        key,
        { kind: e.kind, value: e.value },
        cur ? { ifMatch: cur.version } : { create: true },
      );
      toast(`Restored version ${e.version} of ${key} as version ${w.version ?? "?"}`);
      on.restored();
    } catch (err) {
      const why =
        err instanceof ApiError && err.status === 412
          ? `${key} changed meanwhile; look at the current value and try again.`
          : (err as Error).message;
      replace(slot, h("p", { class: "error", role: "alert" }, `Not restored: ${why}`));
    }
  }

  el.addEventListener("toggle", () => {
    if (el.open && !loaded) void load();
  });
  if (on.open) el.open = true;

  return {
    el,
    /** Re-reads the versions if they are shown. */
    refresh(): void {
      if (el.open) void load();
      else loaded = false;
    },
  };
}
