/**
 * The tools panel (`/tools/`): the upstream MCP servers, every declared tool (invalid ones with
 * their problems), the system prompt of the next turn and the runs with call records.
 */
import { type Api, ApiError } from "./api.js";
import { h, preview, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { createMcpPanel } from "./mcp-view.js";
import { badge, debounced, errorText, toolEntries } from "./tool-parts.js";
import type { Navigate, View } from "./view-parts.js";
import type { Change } from "./watch.js";

const AFFECTS_TOOLS = /^\/byteseek\/(tools\/|prompt\/|memory\/|policy$|llm\/)/;
const AFFECTS_MCP = /^\/byteseek\/mcp(-sync)?\//;

/** The tools panel: every declared tool (invalid ones with their problems), the next system prompt, the runs. */
export function createToolsView(api: Api, navigate: Navigate): View {
  const list = h("div", { id: "tool-list", "aria-live": "polite" }, h("p", { class: "muted" }, "loading…"));
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

  async function loadTools(): Promise<void> {
    const query = searchInput.value.trim();
    try {
      const tools = await toolEntries(api, query);
      // a newer query was typed while this one was answered: its own answer will show
      if (searchInput.value.trim() !== query) return;
      if (!tools.length)
        return replace(
          list,
          h(
            "p",
            { class: "muted" },
            query ? `No tool matches "${query}".` : "No tools are declared under /byteseek/tools/.",
          ),
        );
      replace(
        list,
        h(
          "ul",
          { class: "tool-list" },
          ...tools.map(({ tool, ...t }) =>
            h(
              "li",
              { "data-tool": t.name, "data-status": t.status },
              h("a", { href: routeUrl({ view: "tool", name: t.name }) }, h("strong", {}, t.name)),
              " ",
              badge(t.status),
              tool?.blocked
                ? h("span", { class: "kind-badge kind-denied", title: tool.blocked }, "blocked")
                : null,
              tool ? h("span", { class: "kind-badge", title: "impl kind" }, tool.impl) : null,
              tool ? h("p", {}, preview(tool.snippet ?? tool.description, 160)) : null,
              tool?.blocked ? h("p", { class: "problems" }, tool.blocked) : null,
              t.problems.length
                ? h("ul", { class: "problems" }, ...t.problems.map((p) => h("li", {}, p)))
                : null,
              h(
                "p",
                { class: "muted" },
                h("a", { href: routeUrl({ view: "tree", key: t.key }) }, t.key),
                tool?.owner ? ` — written by run ${tool.owner}` : "",
              ),
            ),
          ),
        ),
      );
    } catch (err) {
      replace(list, h("p", { class: "error" }, `GET /v1/tools: ${errorText(err)}`));
    }
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
      const page = await api.list("/byteseek/tool/", { limit: 200 });
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
    h("h2", {}, "MCP servers"),
    mcp.el,
    h("h2", {}, "Declared tools"),
    searchInput,
    list,
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
  const refreshMcp = debounced(() => mcp.reload());
  return {
    el,
    reload() {
      mcp.reload();
      void loadTools();
      void loadPrompt();
      void loadRuns();
    },
    onChanges(changes: Change[]) {
      if (changes.some((c) => AFFECTS_TOOLS.test(c.key) || c.key === "/byteseek/" || c.key === "/"))
        refreshTools();
      if (changes.some((c) => c.key.startsWith("/byteseek/tool/") && c.key.split("/").length <= 5))
        refreshRuns();
      if (changes.some((c) => AFFECTS_MCP.test(c.key))) refreshMcp();
    },
  };
}
