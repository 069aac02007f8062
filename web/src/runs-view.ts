/**
 * The runs (`/runs/`): every run in the tree with its status, start, steps, calls, tokens and the
 * tools it called, filtered by status, id and tool, a page at a time (GET /v1/agent/runs: the
 * server filters, so a thousand runs never become a thousand rows). Live: a change to a run's
 * state or usage re-reads the page on screen. The keys of list-keys.ts move through every run, not
 * only those of the page on screen: past its last row the next page is read and its first row
 * takes the focus (End walks to the last page), and Enter opens the run.
 */
import { dirs } from "../../shared/keys.js";
import { type Api, ApiError } from "./api.js";
import { formatTime, h, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { listKey } from "./list-keys.js";
import { debounced, errorText } from "./tool-parts.js";
import type { View } from "./view-parts.js";
import type { RunStatus, RunSummary } from "./wire.js";

export const RUNS_PAGE = 50;
/** Rows PageUp/PageDown move. */
const SCREENFUL = 10;
/** What `listKey` answers for End when the number of runs is not known (they come a page at a time). */
const UNKNOWN_TOTAL = Number.MAX_SAFE_INTEGER;

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
  /** A key's walk through the pages is under way: keys meanwhile are not queued up. */
  let walking = false;

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

  /** The rows of the page on screen. */
  const rowEls = () => [...tbody.querySelectorAll<HTMLElement>("tr[data-run]")];

  /** Reads the page `cursors` ends at; answers whether it is the one on screen now. */
  async function load(): Promise<boolean> {
    const ticket = ++asked;
    // a live refresh keeps the focus on the run it was on
    const focused = tbody.contains(document.activeElement)
      ? (document.activeElement as HTMLElement).closest("tr")?.getAttribute("data-run")
      : undefined;
    const after = cursors[cursors.length - 1];
    try {
      const page = await api.runs({
        ...(statusSel.value ? { status: statusSel.value as RunStatus } : {}),
        vid: vidInput.value.trim(),
        tool: toolInput.value.trim(),
        limit: RUNS_PAGE,
        ...(after !== undefined ? { after } : {}),
      });
      if (ticket !== asked) return false;
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
      // one tab stop for the table: the first row, or the one the focus was on
      const trs = rowEls();
      const again = trs.find((tr) => focused && tr.getAttribute("data-run") === focused);
      (again ?? trs[0])?.setAttribute("tabindex", "0");
      again?.focus();
      prev.disabled = cursors.length <= 1;
      next.disabled = page.next === undefined;
      return true;
    } catch (err) {
      if (ticket !== asked) return false;
      status.textContent =
        err instanceof ApiError && err.status === 404
          ? "This server has no agent: it lists no runs."
          : `GET /v1/agent/runs: ${errorText(err)}`;
      return false;
    }
  }

  /** Focuses run number `target` of the whole list (0 the newest), reading the pages up to it. */
  async function goTo(target: number): Promise<void> {
    const start = () => (cursors.length - 1) * RUNS_PAGE;
    let loaded = true;
    if (target < start()) {
      while (cursors.length > 1 && target < start()) cursors.pop();
      loaded = await load();
    }
    while (loaded && target >= start() + rowEls().length && nextCursor !== undefined) {
      cursors.push(nextCursor);
      loaded = await load();
    }
    if (!loaded) return;
    const trs = rowEls();
    const tr = trs[Math.min(trs.length - 1, target - start())];
    if (!tr) return;
    for (const other of trs) other.setAttribute("tabindex", other === tr ? "0" : "-1");
    tr.focus();
  }

  tbody.addEventListener("keydown", (e) => {
    const trs = rowEls();
    // the focus on a row, or on its link (a click put it there)
    const at = trs.findIndex((tr) => tr.contains(document.activeElement));
    if (at < 0) return;
    const here = (cursors.length - 1) * RUNS_PAGE + at;
    const move = listKey(e, here, UNKNOWN_TOTAL, SCREENFUL);
    if (!move) return;
    e.preventDefault();
    if ("open" in move) {
      trs[at]?.querySelector("a")?.click();
      return;
    }
    if (walking) return;
    walking = true;
    void goTo(move.to === UNKNOWN_TOTAL - 1 ? Number.POSITIVE_INFINITY : move.to).finally(() => {
      walking = false;
    });
  });

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
      if (changes.some((c) => c.key.startsWith(dirs.runs) || c.key.startsWith(dirs.usage))) refresh();
    },
  };
}

function row(r: RunSummary): HTMLElement {
  const client = r.client ? ` (${r.client.name ?? "MCP client"})` : "";
  return h(
    "tr",
    { "data-run": r.vid, "data-status": r.status, tabindex: -1 },
    // the row is the tab stop (its keys reach every run); the link still opens on a click
    h("td", {}, h("a", { href: routeUrl({ view: "runs", vid: r.vid }), tabindex: -1 }, r.vid), client),
    h("td", { title: r.resume ?? r.detail ?? "" }, statusBadge(r.status)),
    h("td", {}, r.started ? formatTime(r.started) : "—"),
    h("td", { class: "num" }, String(r.steps)),
    h("td", { class: "num" }, String(r.calls)),
    h("td", { class: "num" }, `${r.tokens.input} / ${r.tokens.output}`),
    h("td", { class: "tools-cell" }, r.tools?.join(", ") ?? ""),
  );
}
