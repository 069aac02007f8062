/**
 * The tools panel (`/tools/`): every declared tool as one compact row — searched with the
 * catalogue's search, filtered by kind, owner, MCP server and state, and drawn only where it is on
 * screen (tool-rows.ts), so 5,000 tools make a few dozen rows — then the upstream MCP servers, the
 * system prompt of the next turn and the runs with call records.
 */
import { dirs, idOf, keys } from "../../shared/keys.js";
import { type Api, ApiError } from "./api.js";
import { h, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { createMcpPanel } from "./mcp-view.js";
import { TOOL_KINDS, TOOL_STATES, toolFacts } from "./tool-facts.js";
import { debounced, errorText, type ToolEntry, toolEntries } from "./tool-parts.js";
import { createToolRows, type Row } from "./tool-rows.js";
import type { Navigate, View } from "./view-parts.js";
import type { Change } from "./watch.js";

/** The folders whose changes may change the catalogue (with the policy, `keys.policy`). */
const TOOL_INPUTS = [dirs.tools, dirs.toolAccept, dirs.prompts, dirs.memory, dirs.llm];
const affectsTools = (key: string): boolean =>
  key === keys.policy || TOOL_INPUTS.some((dir) => key.startsWith(dir));
const affectsMcp = (key: string): boolean => key.startsWith(dirs.mcpServers) || key.startsWith(dirs.mcpSync);
/** Hits asked of the catalogue's search (its most). */
const SEARCH_LIMIT = 100;

function select(id: string, label: string, options: Array<[string, string]>): HTMLSelectElement {
  return h(
    "select",
    { id, "aria-label": label },
    ...options.map(([value, text]) => h("option", { value }, text)),
  ) as HTMLSelectElement;
}

/** The tools panel: every declared tool (searchable, filtered, virtualized), the next system prompt, the runs. */
export function createToolsView(api: Api, navigate: Navigate): View {
  const rows = createToolRows();
  const count = h("p", { id: "tool-count", class: "muted", role: "status" }, "loading…");
  const prompt = h("div", { id: "prompt" }, h("p", { class: "muted" }, "loading…"));
  const runs = h("div", { id: "runs" });
  const mcp = createMcpPanel(api);
  const vidInput = h("input", { id: "vid-input", autocomplete: "off", spellcheck: "false", required: true });
  const searchInput = h("input", {
    id: "tool-search",
    type: "search",
    autocomplete: "off",
    placeholder: "Search tools by what they do (any language)",
    "aria-label": "Search tools",
  }) as HTMLInputElement;
  const kindFilter = select("filter-kind", "Kind", [
    ["", "any kind"],
    ...TOOL_KINDS.map((k): [string, string] => [k, k]),
    ["invalid", "invalid"],
  ]);
  const stateFilter = select("filter-state", "Status", [
    ["", "any status"],
    ...TOOL_STATES.map((s): [string, string] => [s, s]),
  ]);
  const ownerFilter = select("filter-owner", "Owner", [["", "anyone"]]);
  const serverFilter = select("filter-server", "MCP server", [["", "any server"]]);

  /** What the search (or the whole catalogue) answered, with each tool's facts; the filters narrow it. */
  let base: Row[] = [];
  /** The whole catalogue as last read; forgotten when the tree changes under /byteseek/tools/ (or the policy). */
  let catalogue: Promise<ToolEntry[]> | undefined;
  let total = 0;
  let loaded = false;

  /** Keeps a select's choice while its options follow what the catalogue holds. */
  function setOptions(
    el: HTMLSelectElement,
    first: [string, string],
    options: Array<[string, string]>,
  ): void {
    const chosen = el.value;
    replace(el, ...[first, ...options].map(([value, text]) => h("option", { value }, text)));
    el.value = options.some(([v]) => v === chosen) ? chosen : "";
  }

  function applyFilters(): void {
    const kind = kindFilter.value;
    const state = stateFilter.value;
    const owner = ownerFilter.value;
    const server = serverFilter.value;
    const shown = base.filter(
      ({ facts }) =>
        (kind === "" || facts.kind === kind) &&
        (state === "" || (facts.states as string[]).includes(state)) &&
        (owner === "" ||
          (owner === "person"
            ? facts.owner.person
            : owner === "run"
              ? !facts.owner.person
              : !facts.owner.person && `run:${facts.owner.vid}` === owner)) &&
        (server === "" || facts.server === server),
    );
    rows.show(shown);
    const query = searchInput.value.trim();
    count.textContent = !loaded
      ? "loading…"
      : query
        ? `${base.length} match${base.length === 1 ? "" : "es"} for "${query}"${base.length >= SEARCH_LIMIT ? ` (the best ${SEARCH_LIMIT})` : ""} · ${shown.length} shown`
        : `${total} tool${total === 1 ? "" : "s"} · ${shown.length} shown`;
    rows.empty(
      shown.length
        ? null
        : query && !base.length
          ? `No tool matches "${query}".`
          : total === 0
            ? `No tools are declared under ${dirs.tools}.`
            : "No tool passes these filters.",
    );
  }

  async function loadTools(): Promise<void> {
    const query = searchInput.value.trim();
    let entries: ToolEntry[];
    // the whole catalogue is read again only after a change (clearing a search reuses it)
    if (!query) catalogue ??= toolEntries(api);
    try {
      entries = await (query || !catalogue ? toolEntries(api, query, SEARCH_LIMIT) : catalogue);
    } catch (err) {
      catalogue = undefined;
      rows.empty(`GET /v1/tools: ${errorText(err)}`, true);
      return;
    }
    // a newer query was typed while this one was answered: its own answer will show
    if (searchInput.value.trim() !== query) return;
    base = entries.map((entry) => ({ entry, facts: toolFacts(entry) }));
    loaded = true;
    if (!query) {
      total = base.length;
      const vids = [
        ...new Set(base.flatMap(({ facts }) => (facts.owner.person ? [] : [facts.owner.vid]))),
      ].sort();
      setOptions(
        ownerFilter,
        ["", "anyone"],
        [
          ["person", "a person"],
          ["run", "any run"],
          ...vids.slice(0, 200).map((v): [string, string] => [`run:${v}`, `run ${v}`]),
        ],
      );
      const servers = [...new Set(base.flatMap(({ facts }) => (facts.server ? [facts.server] : [])))].sort();
      setOptions(
        serverFilter,
        ["", "any server"],
        servers.map((s): [string, string] => [s, s]),
      );
    }
    applyFilters();
  }

  async function loadPrompt(): Promise<void> {
    try {
      const { system, tools } = await api.prompt();
      replace(
        prompt,
        h("pre", { class: "prompt", id: "prompt-text", tabindex: 0 }, system),
        h(
          "details",
          {},
          h("summary", {}, `The tool list sent with it (${tools.length})`),
          h("pre", { class: "prompt" }, JSON.stringify(tools, null, 2)),
        ),
      );
    } catch (err) {
      replace(prompt, h("p", { class: "error" }, `GET /v1/prompt: ${errorText(err)}`));
    }
  }

  async function loadRuns(): Promise<void> {
    try {
      const page = await api.list(dirs.records, { limit: 200 });
      const vids = page.children.filter((c) => c.kind === "index").map((c) => c.name.slice(0, -1));
      replace(
        runs,
        vids.length
          ? h(
              "ul",
              { class: "results" },
              ...vids.map((vid) => h("li", {}, h("a", { href: routeUrl({ view: "runs", vid }) }, vid))),
            )
          : h("p", { class: "muted" }, "No calls recorded yet."),
      );
    } catch (err) {
      replace(
        runs,
        h(
          "p",
          { class: err instanceof ApiError && err.status === 404 ? "muted" : "error" },
          err instanceof ApiError && err.status === 404 ? "No calls recorded yet." : errorText(err),
        ),
      );
    }
  }

  const el = h(
    "section",
    { class: "node", "aria-labelledby": "tools-title" },
    h("h1", { id: "tools-title" }, "Tools"),
    h("h2", {}, "Declared tools"),
    h(
      "div",
      { class: "tool-filters", role: "search" },
      searchInput,
      kindFilter,
      ownerFilter,
      serverFilter,
      stateFilter,
    ),
    count,
    rows.el,
    h("h2", {}, "MCP servers"),
    mcp.el,
    h("h2", {}, "System prompt for the next turn"),
    h(
      "p",
      { class: "muted" },
      "Rebuilt from the tree (GET /v1/prompt): it changes as soon as a tool, prompt part or memory entry does.",
    ),
    prompt,
    h("h2", {}, "Call records by run"),
    runs,
    h(
      "form",
      {
        class: "inline-form",
        onsubmit: (e: Event) => {
          e.preventDefault();
          const vid = vidInput.value.trim();
          if (vid) navigate({ view: "runs", vid });
        },
      },
      h("label", { for: vidInput.id }, "Records of run (vid)"),
      vidInput,
      " ",
      h("button", { type: "submit" }, "Show"),
    ),
  );
  void loadTools();
  void loadPrompt();
  void loadRuns();
  const refreshTools = debounced(() => {
    void loadTools();
    void loadPrompt();
  });
  const refreshRuns = debounced(() => void loadRuns());
  const refreshSearch = debounced(() => void loadTools(), 150);
  searchInput.addEventListener("input", refreshSearch);
  for (const f of [kindFilter, ownerFilter, serverFilter, stateFilter])
    f.addEventListener("change", applyFilters);
  const refreshMcp = debounced(() => mcp.reload());
  return {
    el,
    reload() {
      catalogue = undefined;
      mcp.reload();
      void loadTools();
      void loadPrompt();
      void loadRuns();
    },
    onChanges(changes: Change[]) {
      if (changes.some((c) => affectsTools(c.key) || c.key === dirs.byteseek || c.key === "/")) {
        catalogue = undefined;
        refreshTools();
      }
      // the records folder, a run's folder in it, or a record: not what a record holds
      if (
        changes.some(
          (c) => c.key.startsWith(dirs.records) && idOf(dirs.records, c.key).split("/").length <= 2,
        )
      )
        refreshRuns();
      if (changes.some((c) => affectsMcp(c.key))) {
        catalogue = undefined;
        refreshMcp();
        // a sync may hold an upstream tool for review, or release it
        refreshTools();
      }
    },
  };
}
