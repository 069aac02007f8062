/**
 * The call records of one run (the tree's `/byteseek/tool/<vid>/`) as a table, and the system
 * prompt of that run's next turn: the calls section of a run's page (run-view.ts). Records are
 * tree values, read as they are.
 */
import { runDirs } from "../../shared/keys.js";
import { printable } from "../../tools/catalogue/printable.js";
import { type Api, ApiError, type Child, type JsonValue } from "./api.js";
import { formatTime, h, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { createPages } from "./paging.js";
import { badge, debounced, errorText } from "./tool-parts.js";
import type { View } from "./view-parts.js";

const RECORD_PAGE = 200;

/** The records of one run (`/byteseek/tool/<vid>/`) as a table: kind, tool, time, and the text the model saw. */
export function createRecordsSection(api: Api, vid: string): View {
  const dir = runDirs.records(vid);
  const tbody = h("tbody");
  const more = h("div", { class: "more" });
  const status = h("p", { class: "muted", role: "status" });
  const pages = createPages(api, dir, RECORD_PAGE);

  async function load(appendPage = false): Promise<void> {
    try {
      await pages.load(appendPage);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        status.textContent = errorText(err);
        return;
      }
      pages.clear();
    }
    const { shown, next } = pages;
    status.textContent = shown.length
      ? `${shown.length}${next !== null ? "+" : ""} call${shown.length === 1 && next === null ? "" : "s"}`
      : `No calls recorded for ${vid} yet.`;
    replace(tbody, ...shown.filter((c) => c.kind === "json").map(row));
    replace(
      more,
      next !== null ? h("button", { type: "button", onclick: () => void load(true) }, "Load more") : null,
    );
  }

  function row(c: Child): HTMLElement {
    const r = (c.value ?? {}) as Record<string, JsonValue>;
    const text = String(r.text ?? "");
    const kind = String(r.kind ?? "?");
    return h(
      "tr",
      { "data-record": c.name, "data-kind": kind },
      h("td", { class: "num" }, h("a", { href: routeUrl({ view: "tree", key: dir + c.name }) }, c.name)),
      h(
        "td",
        {},
        h("a", { href: routeUrl({ view: "tool", name: String(r.name ?? "") }) }, String(r.name ?? "?")),
      ),
      h("td", {}, badge(kind)),
      h("td", {}, formatTime(typeof r.ts === "number" ? r.ts : c.mtime)),
      h("td", { class: "num" }, typeof r.ms === "number" ? `${Math.round(r.ms)} ms` : ""),
      h(
        "td",
        { class: "text-cell" },
        h("pre", {}, text),
        h(
          "details",
          {},
          h("summary", {}, "Arguments"),
          h("pre", {}, JSON.stringify(r.args ?? null, null, 2)),
        ),
        typeof r.approval === "string" ? approvalDetails(api, r.approval) : null,
      ),
    );
  }

  const nextPrompt = h("div", {});
  const promptSection = h(
    "details",
    { class: "history", id: "run-prompt" },
    h("summary", {}, `The system prompt of ${vid}'s next turn`),
    nextPrompt,
  );
  async function loadPrompt(): Promise<void> {
    try {
      replace(
        nextPrompt,
        h("pre", { class: "prompt", id: "run-prompt-text", tabindex: 0 }, (await api.prompt(vid)).system),
      );
    } catch (err) {
      replace(nextPrompt, h("p", { class: "error" }, `GET /v1/prompt: ${errorText(err)}`));
    }
  }
  promptSection.addEventListener("toggle", () => {
    if (promptSection.open) void loadPrompt();
  });

  const el = h(
    "section",
    { "aria-labelledby": "records-title" },
    h("h2", { id: "records-title" }, "Calls"),
    h(
      "p",
      {},
      h("a", { href: routeUrl({ view: "tree", key: dir }) }, dir),
      " — one record per call, the text exactly as the model saw it.",
    ),
    status,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "listing records" },
        h("caption", { class: "visually-hidden" }, `Tool calls of run ${vid}`),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["#", "Tool", "Kind", "Time", "Took", "Text the model saw"].map((t) =>
              h("th", { scope: "col" }, t),
            ),
          ),
        ),
        tbody,
      ),
    ),
    more,
    promptSection,
  );
  void load();
  const refresh = debounced(() => {
    void load();
    if (promptSection.open) void loadPrompt();
  });
  return {
    el,
    reload: () => void load(),
    onChanges(changes) {
      if (changes.some((c) => c.key.startsWith(dir) || (c.type === "deltree" && dir.startsWith(c.key))))
        refresh();
    },
  };
}

/**
 * The approval that let a call run, read when opened: who decided it and through which credential
 * (`decision.via`: a bearer token, a page session, a terminal, an MCP session), for the audit.
 */
function approvalDetails(api: Api, key: string): HTMLElement {
  const body = h("p", { class: "approval-decision" }, "…");
  const el = h("details", { class: "approval-of-call" }, h("summary", {}, "Approval"), body);
  el.addEventListener("toggle", () => {
    if (!el.open) return;
    api.get(key).then(
      (node) => {
        const e = node.value as { state?: string; decision?: { scope?: string; by?: string; via?: string } };
        const d = e.decision;
        body.textContent = printable(
          d
            ? `${e.state} ${d.scope ?? ""} by ${d.by ?? "?"}${d.via ? ` via ${d.via}` : ""} (${key})`
            : `${e.state ?? "?"} (${key})`,
        );
      },
      (err: unknown) => {
        body.textContent = `${key}: ${errorText(err)}`;
      },
    );
  });
  return el;
}
