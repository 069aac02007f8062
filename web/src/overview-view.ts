/**
 * The landing page (`/`): what a person oversees on one screen — runs by status, the approvals
 * waiting (decided here in one click), the tools failing in the last hour, the upstream MCP
 * servers' state, the store, the workspace and the sandbox. Live: the page's watch of the tree
 * hands each change to `onChanges`, which re-reads only the card the change concerns (never a
 * timer). Every card keeps its place and size while it loads, so nothing shifts.
 */
import { dirs, keys } from "../../shared/keys.js";
import { printable } from "../../tools/catalogue/printable.js";
import type { Api, InfoAnswer } from "./api.js";
import { createApprovalsPanel } from "./approvals-view.js";
import { formatTime, h, replace } from "./dom.js";
import { encodeKeyPath } from "./keys.js";
import type { View } from "./view-parts.js";
import { errorText } from "./view-parts.js";
import type { Change } from "./watch.js";
import type { McpServerJson, OverviewJson } from "./wire.js";

const STATUSES = ["running", "interrupted", "failed", "done"] as const;

export function createOverviewView(api: Api): View {
  const runsCard = card("overview-runs", "Runs");
  const approvalsCard = h("section", { class: "card approvals-card", "aria-live": "polite" });
  const failingCard = card("overview-failing", "Failing tools, last hour");
  const mcpCard = card("overview-mcp", "MCP servers");
  const storeCard = card("overview-store", "Store");
  const hostCard = card("overview-host", "Workspace and sandbox");
  const approvals = createApprovalsPanel(api, approvalsCard, { empty: "Nothing waits for a decision." });
  const el = h(
    "section",
    { class: "overview" },
    h("h1", {}, "Overview"),
    h(
      "div",
      { class: "overview-grid" },
      runsCard.el,
      approvalsCard,
      failingCard.el,
      mcpCard.el,
      storeCard.el,
      hostCard.el,
    ),
  );
  let revision: HTMLElement | null = null;

  const loadSummary = coalesce(async () => {
    try {
      const o = await api.overview();
      runsCard.fill(...runsBody(o.runs));
      failingCard.fill(...failingBody(o.failing));
      storeCard.fill(storeBody(o.store));
      revision = storeCard.el.querySelector<HTMLElement>("[data-field=revision]");
    } catch (err) {
      runsCard.fill(h("p", { class: "error" }, `Could not read the overview: ${errorText(err)}`));
    }
  });
  const loadMcp = coalesce(async () => {
    try {
      mcpCard.fill(mcpBody((await api.mcp()).servers));
    } catch (err) {
      // a server without an MCP client answers 404: it has no upstream servers
      mcpCard.fill(
        h(
          "p",
          { class: "muted" },
          (err as { status?: number }).status === 404
            ? "This server has no MCP client."
            : `Could not read them: ${errorText(err)}`,
        ),
      );
    }
  });
  const loadHost = coalesce(async () => {
    try {
      hostCard.fill(hostBody(await api.info()));
    } catch (err) {
      hostCard.fill(h("p", { class: "error" }, errorText(err)));
    }
  });

  function reload(): void {
    loadSummary();
    loadMcp();
    loadHost();
    approvals.reload();
  }
  reload();

  return {
    el,
    reload,
    onChanges(changes: Change[]): void {
      const touched = (prefix: string) => changes.some((c) => c.key.startsWith(prefix));
      // the revision moves with every change: shown at once, without a request
      const rev = Math.max(...changes.map((c) => c.rev));
      if (revision && Number(revision.textContent) < rev) revision.textContent = String(rev);
      if (touched(dirs.runs) || touched(dirs.records) || touched(dirs.usage)) loadSummary();
      if (touched(dirs.mcpServers) || touched(dirs.tools)) loadMcp();
      if (touched(keys.policy) || touched(dirs.llm)) loadHost();
      approvals.onChanges(changes);
    },
  };
}

/** A card: its heading stays, its body is replaced; it reserves its height while it loads. */
function card(id: string, title: string) {
  const body = h("div", { class: "card-body" }, h("p", { class: "muted" }, "Loading…"));
  const el = h(
    "section",
    { class: "card", id, "aria-labelledby": `${id}-title`, "aria-busy": "true" },
    h("h2", { id: `${id}-title` }, title),
    body,
  );
  return {
    el,
    fill(...children: Node[]): void {
      replace(body, ...children);
      el.removeAttribute("aria-busy");
    },
  };
}

/** Runs `load` now, or once more after the one in flight: bursts of changes cost two reads at most. */
function coalesce(load: () => Promise<void>): () => void {
  let running: Promise<void> | null = null;
  let again = false;
  return function run(): void {
    if (running) {
      again = true;
      return;
    }
    running = load().finally(() => {
      running = null;
      if (again) {
        again = false;
        run();
      }
    });
  };
}

/**
 * A link that Space also follows (Enter does by itself): rows of the overview are links, so the
 * keyboard reaches each in order and acts on it as a button would.
 */
function rowLink(href: string, ...children: Array<Node | string>): HTMLAnchorElement {
  const a = h("a", { href }, ...children);
  a.addEventListener("keydown", (e) => {
    if (e.key === " ") {
      e.preventDefault();
      a.click();
    }
  });
  return a;
}

function runsBody(runs: OverviewJson["runs"]): Node[] {
  const tiles = h(
    "ul",
    { class: "tiles", "aria-label": "Runs by status" },
    ...STATUSES.map((s) =>
      h(
        "li",
        { "data-status": s },
        rowLink(
          `/runs/?status=${s}`,
          h("span", { class: "tile-count", "data-count": s }, String(runs.counts[s])),
          h("span", { class: "tile-label" }, s),
        ),
      ),
    ),
  );
  if (runs.shown.length === 0) return [tiles, h("p", { class: "muted" }, "No runs yet.")];
  return [
    tiles,
    h(
      "table",
      { class: "rows" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["run", "status", "started", "calls", "tokens"].map((c) => h("th", { scope: "col" }, c)),
        ),
      ),
      h(
        "tbody",
        {},
        ...runs.shown.map((r) =>
          h(
            "tr",
            { "data-vid": r.vid, "data-status": r.status },
            h("td", {}, rowLink(`/runs/${encodeURIComponent(r.vid)}`, h("code", {}, printable(r.vid)))),
            h(
              "td",
              {},
              h("span", { class: `badge ${r.status}` }, r.status),
              r.detail?.startsWith("waiting ")
                ? h("span", { class: "muted" }, " · waits for approval")
                : null,
            ),
            h("td", {}, r.started ? formatTime(r.started) : "—"),
            h("td", { class: "num" }, String(r.calls)),
            h("td", { class: "num" }, `${r.tokens.input + r.tokens.output}`),
          ),
        ),
      ),
    ),
  ];
}

function failingBody(failing: OverviewJson["failing"]): Node[] {
  const note = failing.truncated ? [h("p", { class: "muted" }, "(only the newest records were read)")] : [];
  if (failing.tools.length === 0)
    return [h("p", { class: "muted" }, `No failed calls since ${formatTime(failing.since)}.`), ...note];
  return [
    ...note,
    h(
      "table",
      { class: "rows" },
      h(
        "thead",
        {},
        h("tr", {}, ...["tool", "failed", "last failure"].map((c) => h("th", { scope: "col" }, c))),
      ),
      h(
        "tbody",
        {},
        ...failing.tools.map((t) =>
          h(
            "tr",
            { "data-tool": t.name },
            h("td", {}, rowLink(`/tools/${encodeURIComponent(t.name)}`, h("code", {}, printable(t.name)))),
            h("td", { class: "num" }, `${t.failures} of ${t.calls}`),
            h(
              "td",
              {},
              h("span", { class: "badge failed" }, t.last.kind),
              " ",
              h("a", { href: `/ui/${encodeKeyPath(t.last.key)}`, title: t.last.key }, printable(t.last.text)),
            ),
          ),
        ),
      ),
    ),
  ];
}

/** What a person must do about an upstream server, if anything, in a few words. */
function mcpState(s: McpServerJson): { label: string; tone: "ok" | "warn" | "bad" | "muted" }[] {
  const out: { label: string; tone: "ok" | "warn" | "bad" | "muted" }[] = [];
  if (!s.enabled) out.push({ label: "disabled", tone: "muted" });
  else if (s.state === "running") out.push({ label: "connected", tone: "ok" });
  else if (s.state === "failed" || s.state === "invalid" || s.state === "backoff")
    out.push({ label: s.state, tone: "bad" });
  else out.push({ label: s.state, tone: "muted" });
  if (s.auth?.state === "needs-sign-in") out.push({ label: "needs sign-in", tone: "warn" });
  if (s.held.length > 0) out.push({ label: `${s.held.length} held for review`, tone: "warn" });
  return out;
}

function mcpBody(servers: McpServerJson[]): Node {
  if (servers.length === 0) return h("p", { class: "muted" }, "No upstream MCP servers registered.");
  return h(
    "table",
    { class: "rows" },
    h("thead", {}, h("tr", {}, ...["server", "state", "tools"].map((c) => h("th", { scope: "col" }, c)))),
    h(
      "tbody",
      {},
      ...servers.map((s) =>
        h(
          "tr",
          { "data-server": s.server },
          h(
            "td",
            {},
            rowLink(`/ui/${encodeKeyPath(keys.mcpServer(s.server))}`, h("code", {}, printable(s.server))),
          ),
          h(
            "td",
            {},
            ...mcpState(s).flatMap((st) => [h("span", { class: `badge ${st.tone}` }, st.label), " "]),
            s.error
              ? h("span", { class: "muted", title: s.error }, printable(s.error.split("\n")[0] ?? ""))
              : null,
          ),
          h("td", { class: "num" }, String(s.tools)),
        ),
      ),
    ),
  );
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

function facts(entries: Array<[string, Node | string, string?]>): HTMLElement {
  return h(
    "dl",
    { class: "facts" },
    ...entries.flatMap(([k, v, field]) => [h("dt", {}, k), h("dd", field ? { "data-field": field } : {}, v)]),
  );
}

function storeBody(store: OverviewJson["store"]): Node {
  return facts([
    ["revision", String(store.revision), "revision"],
    ["size", store.sizeBytes === undefined ? "—" : formatBytes(store.sizeBytes), "size"],
    [
      "durability",
      store.durability
        ? h("span", { class: store.durable ? "" : "warn-text" }, store.durability)
        : "not described by this server",
      "durability",
    ],
    ["engine", store.engine ?? "—"],
    ...(store.location ? [["location", h("code", {}, printable(store.location))] as [string, Node]] : []),
  ]);
}

function hostBody(info: InfoAnswer): Node {
  const sandbox = info.sandbox;
  const llm = info.llm;
  return facts([
    [
      "workspace",
      info.workspace ? h("code", {}, printable(info.workspace)) : "none (no tool runtime)",
      "workspace",
    ],
    [
      "sandbox",
      sandbox
        ? h(
            "span",
            {},
            h("span", { class: `badge ${sandbox.state === "on" ? "ok" : "bad"}` }, sandbox.state),
            sandbox.warning ? ` ${sandbox.warning}` : "",
          )
        : "—",
      "sandbox",
    ],
    [
      "model",
      llm?.configured
        ? h("code", {}, `${llm.api ?? ""} ${llm.model ?? ""}`.trim())
        : llm
          ? h("span", { class: "warn-text" }, llm.problem ?? "not configured")
          : "—",
      "model",
    ],
  ]);
}
