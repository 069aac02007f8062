/**
 * The runs (`/runs/`): every run in the tree with its status, start, steps, calls, tokens and the
 * tools it called, filtered by status, id and tool, a page at a time (GET /v1/agent/runs: the
 * server filters, so a thousand runs never become a thousand rows). Live: a change to a run's
 * state or usage re-reads the page on screen.
 */
import { type Api, ApiError } from "./api.js";
import { formatTime, h, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { debounced, errorText } from "./tool-parts.js";
import type { View } from "./view-parts.js";
import type { RunStatus, RunSummary } from "./wire.js";

export const RUNS_PAGE = 50;

const STATUSES: RunStatus[] = ["running", "interrupted", "done", "failed", "session"];

/** Runs › `here`: the way back to the list from a run's page. */
export function runsBreadcrumb(here?: string): HTMLElement {
  return h(
    "nav",
    { class: "breadcrumb", "aria-label": "Breadcrumb" },
    h(
      "ol",
      {},
      here === undefined
        ? h("li", {}, h("span", { "aria-current": "location" }, "Runs"))
        : h("li", {}, h("a", { href: routeUrl({ view: "runs" }) }, "Runs")),
      here === undefined ? null : h("li", {}, h("span", { "aria-current": "location" }, here)),
    ),
  );
}

export function statusBadge(status: RunStatus): HTMLElement {
  return h("span", { class: `run-status run-${status}`, "data-status": status }, status);
}

export function createRunsView(api: Api): View {
  const statusSel = h(
    "select",
    { id: "runs-status" },
    h("option", { value: "" }, "any status"),
    ...STATUSES.map((s) => h("option", { value: s }, s)),
  );
  const vidInput = h("input", {
    id: "runs-vid",
    type: "search",
    placeholder: "part of a run id",
    autocomplete: "off",
    spellcheck: false,
  });
  const toolInput = h("input", {
    id: "runs-tool",
    type: "search",
    placeholder: "e.g. edit.write",
    autocomplete: "off",
    spellcheck: false,
  });
  const tbody = h("tbody");
  const status = h("p", { id: "runs-summary", class: "muted", role: "status" }, "loading…");
  const prev = h("button", { type: "button", id: "runs-prev", disabled: true }, "← Previous");
  const next = h("button", { type: "button", id: "runs-next", disabled: true }, "Next →");
  /** The `after` of each page up to the one shown (the first page's is undefined). */
  let cursors: Array<string | undefined> = [undefined];
  let nextCursor: string | undefined;
  /** Answers arriving out of order: only the latest request's is shown. */
  let asked = 0;

  // the filters live in the address (`/runs/?status=failed&tool=shell`): a reload or a shared link keeps them
  const given = new URLSearchParams(location.pathname.startsWith("/runs") ? location.search : "");
  statusSel.value = STATUSES.includes(given.get("status") as RunStatus)
    ? (given.get("status") as string)
    : "";
  vidInput.value = given.get("vid") ?? "";
  toolInput.value = given.get("tool") ?? "";

  function keepInAddress(): void {
    const q = new URLSearchParams();
    if (statusSel.value) q.set("status", statusSel.value);
    if (vidInput.value.trim()) q.set("vid", vidInput.value.trim());
    if (toolInput.value.trim()) q.set("tool", toolInput.value.trim());
    const qs = q.toString();
    if (location.pathname.startsWith("/runs")) history.replaceState(null, "", `/runs/${qs ? `?${qs}` : ""}`);
  }

  async function load(): Promise<void> {
    const ticket = ++asked;
    const after = cursors[cursors.length - 1];
    try {
      const page = await api.runs({
        ...(statusSel.value ? { status: statusSel.value as RunStatus } : {}),
        vid: vidInput.value.trim(),
        tool: toolInput.value.trim(),
        limit: RUNS_PAGE,
        ...(after !== undefined ? { after } : {}),
      });
      if (ticket !== asked) return;
      nextCursor = page.next;
      const first = (cursors.length - 1) * RUNS_PAGE;
      status.textContent = page.runs.length
        ? `Runs ${first + 1}–${first + page.runs.length}${page.next ? " (more on the next page)" : ""}`
        : cursors.length > 1
          ? "No more runs."
          : filtered()
            ? "No run matches these filters."
            : "No runs yet: a turn of the agent (the Agent page, byteseek run, POST /v1/agent/turn) starts one.";
      replace(tbody, ...page.runs.map(row));
      prev.disabled = cursors.length <= 1;
      next.disabled = page.next === undefined;
    } catch (err) {
      if (ticket !== asked) return;
      status.textContent =
        err instanceof ApiError && err.status === 404
          ? "This server has no agent: it lists no runs."
          : `GET /v1/agent/runs: ${errorText(err)}`;
    }
  }

  const filtered = () =>
    statusSel.value !== "" || vidInput.value.trim() !== "" || toolInput.value.trim() !== "";

  function restart(): void {
    cursors = [undefined];
    keepInAddress();
    void load();
  }
  const typed = debounced(restart, 200);
  statusSel.addEventListener("change", restart);
  vidInput.addEventListener("input", typed);
  toolInput.addEventListener("input", typed);
  prev.addEventListener("click", () => {
    if (cursors.length > 1) cursors.pop();
    void load();
  });
  next.addEventListener("click", () => {
    if (nextCursor === undefined) return;
    cursors.push(nextCursor);
    void load();
  });

  const el = h(
    "section",
    { class: "node runs-list", "aria-labelledby": "runs-title" },
    runsBreadcrumb(),
    h("h1", { id: "runs-title" }, "Runs"),
    h(
      "form",
      { class: "runs-filters", role: "search", onsubmit: (e: Event) => e.preventDefault() },
      h("label", { for: "runs-status" }, "Status "),
      statusSel,
      h("label", { for: "runs-vid" }, "Run id "),
      vidInput,
      h("label", { for: "runs-tool" }, "Tool used "),
      toolInput,
    ),
    status,
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "listing runs" },
        h("caption", { class: "visually-hidden" }, "Runs"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["Run", "Status", "Started", "Steps", "Calls", "Tokens", "Tools used"].map((t) =>
              h("th", { scope: "col" }, t),
            ),
          ),
        ),
        tbody,
      ),
    ),
    h("nav", { class: "pager", "aria-label": "Pages of runs" }, prev, " ", next),
  );
  void load();
  const refresh = debounced(() => void load(), 150);
  return {
    el,
    reload: () => void load(),
    onChanges(changes) {
      if (changes.some((c) => c.key.startsWith("/vthread/") || c.key.startsWith("/byteseek/usage/")))
        refresh();
    },
  };
}

function row(r: RunSummary): HTMLElement {
  const client = r.client ? ` (${r.client.name ?? "MCP client"})` : "";
  return h(
    "tr",
    { "data-run": r.vid, "data-status": r.status },
    h("td", {}, h("a", { href: routeUrl({ view: "runs", vid: r.vid }) }, r.vid), client),
    h("td", { title: r.resume ?? r.detail ?? "" }, statusBadge(r.status)),
    h("td", {}, r.started ? formatTime(r.started) : "—"),
    h("td", { class: "num" }, String(r.steps)),
    h("td", { class: "num" }, String(r.calls)),
    h("td", { class: "num" }, `${r.tokens.input} / ${r.tokens.output}`),
    h("td", { class: "tools-cell" }, r.tools?.join(", ") ?? ""),
  );
}
