import { type Api, ApiError, type Child, type JsonValue } from "./api.js";
import { formatTime, h, preview, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { createMcpPanel } from "./mcp-view.js";
import { createSchemaForm, type JsonSchema } from "./schema-form.js";
import type { Navigate, View } from "./view-parts.js";
import type { Change } from "./watch.js";

/** A declared tool as the panel shows it, whatever shape `GET /v1/tools` gave it. */
interface ToolEntry {
  name: string;
  key: string;
  status: "enabled" | "disabled" | "invalid";
  declaration: Record<string, JsonValue> | null;
  problems: string[];
  /** Why the policy would deny every call, when it would. */
  blocked?: string;
  owner?: string;
}

/** Reads `GET /v1/tools`: `{valid|tools: [...], invalid: [{name, key, problems}]}`. */
function toolEntries(body: unknown): ToolEntry[] {
  const b = (body ?? {}) as Record<string, unknown>;
  const valid = (Array.isArray(body) ? body : (b.valid ?? b.tools ?? [])) as Array<Record<string, unknown>>;
  const invalid = (b.invalid ?? []) as Array<Record<string, unknown>>;
  const out: ToolEntry[] = [];
  for (const v of valid) {
    const decl = (v.declaration ?? v) as Record<string, JsonValue>;
    const name = String(v.name ?? decl.name);
    out.push({
      name,
      key: String(v.key ?? `/byteseek/tools/${name}`),
      status: decl.enabled === false ? "disabled" : "enabled",
      declaration: decl,
      problems: [],
      ...(typeof v.blocked === "string" ? { blocked: v.blocked } : {}),
      ...(typeof v.owner === "string" ? { owner: v.owner } : {}),
    });
  }
  for (const v of invalid) {
    const name = String(v.name);
    out.push({
      name,
      key: String(v.key ?? `/byteseek/tools/${name}`),
      status: "invalid",
      declaration: null,
      problems: Array.isArray(v.problems) ? v.problems.map(String) : [],
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The prompt's text, from a string answer or `{system}` / `{prompt}` / `{text}`. */
function promptText(body: unknown): string {
  if (typeof body === "string") return body;
  const b = (body ?? {}) as Record<string, unknown>;
  for (const k of ["system", "prompt", "text"]) if (typeof b[k] === "string") return b[k] as string;
  return JSON.stringify(body, null, 2);
}

/** The impl kind: `impl` is the kind itself in `GET /v1/tools`, an object in a raw declaration. */
function implKind(t: ToolEntry): string {
  const impl = t.declaration?.impl;
  if (typeof impl === "string") return impl;
  if (impl && typeof impl === "object" && !Array.isArray(impl)) return String(impl.kind ?? "");
  return "";
}

function badge(kind: string): HTMLElement {
  return h("span", { class: `kind-badge kind-${kind}` }, kind);
}

function errorText(err: unknown): string {
  if (err instanceof ApiError && err.status === 404 && err.code === "HTTP_NOT_FOUND")
    return `${err.message} (this server does not offer it yet)`;
  return err instanceof ApiError ? `${err.message} (${err.code})` : (err as Error).message;
}

/** Calls `fn` once per burst of changes (an agent writes many records in a row). */
function debounced(fn: () => void, ms = 80): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  return () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      fn();
    }, ms);
  };
}

const AFFECTS_TOOLS = /^\/byteseek\/(tools\/|prompt\/|memory\/|policy$|llm\/)/;
const AFFECTS_MCP = /^\/byteseek\/mcp(-sync)?\//;

/** The tools panel: every declared tool (invalid ones with their problems), the next system prompt, the runs. */
export function createToolsView(api: Api, navigate: Navigate): View {
  const list = h("div", { id: "tool-list", "aria-live": "polite" }, h("p", { class: "muted" }, "loading…"));
  const prompt = h("div", { id: "prompt" }, h("p", { class: "muted" }, "loading…"));
  const runs = h("div", { id: "runs" });
  const mcp = createMcpPanel(api);
  const vidInput = h("input", { id: "vid-input", autocomplete: "off", spellcheck: "false", required: true });

  async function loadTools(): Promise<void> {
    try {
      const tools = toolEntries(await api.tools());
      if (!tools.length)
        return replace(list, h("p", { class: "muted" }, "No tools are declared under /byteseek/tools/."));
      replace(
        list,
        h(
          "ul",
          { class: "tool-list" },
          ...tools.map((t) =>
            h(
              "li",
              { "data-tool": t.name, "data-status": t.status },
              h("a", { href: routeUrl({ view: "tool", name: t.name }) }, h("strong", {}, t.name)),
              " ",
              badge(t.status),
              t.blocked ? h("span", { class: "kind-badge kind-denied", title: t.blocked }, "blocked") : null,
              implKind(t) ? h("span", { class: "kind-badge", title: "impl kind" }, implKind(t)) : null,
              t.declaration
                ? h("p", {}, preview(String(t.declaration.snippet ?? t.declaration.description ?? ""), 160))
                : null,
              t.blocked ? h("p", { class: "problems" }, t.blocked) : null,
              t.problems.length
                ? h("ul", { class: "problems" }, ...t.problems.map((p) => h("li", {}, p)))
                : null,
              h(
                "p",
                { class: "muted" },
                h("a", { href: routeUrl({ view: "tree", key: t.key }) }, t.key),
                t.owner ? ` — written by run ${t.owner}` : "",
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
      const body = await api.prompt();
      const tools = (body as { tools?: unknown })?.tools;
      replace(
        prompt,
        h("pre", { class: "prompt", id: "prompt-text", tabindex: 0 }, promptText(body)),
        Array.isArray(tools)
          ? h(
              "details",
              {},
              h("summary", {}, `The tool list sent with it (${tools.length})`),
              h("pre", { class: "prompt" }, JSON.stringify(tools, null, 2)),
            )
          : null,
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

/** One tool: its declaration, a form generated from its `params`, and the result of a call. */
export function createToolView(api: Api, name: string): View {
  const body = h("div", {}, h("p", { class: "muted" }, "loading…"));
  const el = h(
    "section",
    { class: "node", "aria-labelledby": "tool-title" },
    h(
      "nav",
      { class: "breadcrumb", "aria-label": "Breadcrumb" },
      h(
        "ol",
        {},
        h("li", {}, h("a", { href: routeUrl({ view: "tools" }) }, "Tools")),
        h("li", {}, h("span", { "aria-current": "location" }, name)),
      ),
    ),
    h("h1", { id: "tool-title" }, name),
    body,
  );

  async function load(): Promise<void> {
    let tool: ToolEntry | undefined;
    try {
      tool = toolEntries(await api.tools()).find((t) => t.name === name);
    } catch (err) {
      replace(body, h("p", { class: "error" }, `GET /v1/tools: ${errorText(err)}`));
      return;
    }
    if (!tool) {
      replace(
        body,
        h(
          "p",
          {},
          `No tool ${name} is declared. `,
          h(
            "a",
            { href: routeUrl({ view: "tree", key: `/byteseek/tools/${name}` }) },
            `Declare it at /byteseek/tools/${name}`,
          ),
          ".",
        ),
      );
      return;
    }
    const decl = tool.declaration;
    const params = (decl?.params ?? { type: "object" }) as JsonSchema;
    const form = createSchemaForm(params, "arg");
    const vid = h("input", {
      id: "call-vid",
      value: "web",
      autocomplete: "off",
      spellcheck: "false",
      required: true,
    });
    const approve = h("input", { type: "checkbox", id: "call-approve" });
    const result = h("div", { id: "call-result", "aria-live": "polite" });
    const message = h("p", { class: "error", role: "alert" });
    const callButton = h("button", { type: "submit", class: "primary" }, `Call ${name}`);

    async function call(e: Event): Promise<void> {
      e.preventDefault();
      replace(message);
      const args = form.read();
      if (!args.ok) {
        replace(message, args.error);
        return;
      }
      callButton.disabled = true;
      replace(result, h("p", { class: "muted" }, "calling…"));
      try {
        const r = (await api.call(name, {
          args: args.value,
          vid: vid.value.trim() || "web",
          ...(approve.checked ? { approve: true } : {}),
        })) as Record<string, unknown>;
        const kind = String(r.kind ?? (r.isError ? "error" : "ok"));
        const record = typeof r.record === "string" ? r.record : undefined;
        replace(
          result,
          h(
            "div",
            { class: "result", "data-kind": kind },
            h("h2", {}, "Result ", badge(kind)),
            h("pre", { class: "prompt", id: "call-result-text" }, String(r.text ?? "")),
            r.details && Object.keys(r.details as object).length
              ? h(
                  "details",
                  {},
                  h("summary", {}, "Details"),
                  h("pre", { class: "prompt" }, JSON.stringify(r.details, null, 2)),
                )
              : null,
            h(
              "p",
              { class: "related" },
              record
                ? h(
                    "a",
                    { href: routeUrl({ view: "tree", key: record }), id: "call-record" },
                    `Record ${record}`,
                  )
                : null,
              h(
                "a",
                { href: routeUrl({ view: "runs", vid: vid.value.trim() || "web" }) },
                `All records of ${vid.value.trim() || "web"}`,
              ),
            ),
          ),
        );
      } catch (err) {
        replace(result);
        replace(message, errorText(err));
      } finally {
        callButton.disabled = false;
      }
    }

    replace(
      body,
      h(
        "p",
        {},
        badge(tool.status),
        tool.blocked ? h("span", { class: "kind-badge kind-denied" }, "blocked") : null,
        " ",
        h("a", { href: routeUrl({ view: "tree", key: tool.key }) }, tool.key),
      ),
      decl?.description ? h("p", { class: "description" }, String(decl.description)) : null,
      tool.blocked ? h("p", { class: "problems" }, tool.blocked) : null,
      tool.problems.length
        ? h(
            "div",
            {},
            h(
              "p",
              {},
              "This declaration is invalid, so the tool is left out of the model's tool list; a call answers kind vet:",
            ),
            h("ul", { class: "problems" }, ...tool.problems.map((p) => h("li", {}, p))),
          )
        : null,
      h(
        "form",
        { id: "call-form", onsubmit: (e: Event) => void call(e) },
        form.el,
        h("label", { for: vid.id }, "Run (vid): the record goes to /byteseek/tool/<vid>/"),
        vid,
        h(
          "label",
          { class: "check" },
          approve,
          decl?.confirm === true
            ? " Approve this call (the tool needs confirmation)"
            : " Approve (only tools that need confirmation use it)",
        ),
        message,
        h("div", { class: "actions" }, callButton),
      ),
      result,
    );
  }

  void load();
  return { el, reload: () => void load() };
}

const RECORD_PAGE = 200;

/** The records of one run (`/byteseek/tool/<vid>/`) as a table: kind, tool, time, and the text the model saw. */
export function createRecordsView(api: Api, vid: string): View {
  const dir = `/byteseek/tool/${vid}/`;
  const tbody = h("tbody");
  const more = h("div", { class: "more" });
  const status = h("p", { class: "muted", role: "status" });
  let shown: Child[] = [];
  let next: string | null = null;

  async function load(appendPage = false): Promise<void> {
    try {
      const page =
        appendPage && next !== null
          ? await api.list(dir, { limit: RECORD_PAGE, after: next })
          : await api.list(dir, { limit: Math.max(RECORD_PAGE, shown.length) });
      shown = appendPage ? [...shown, ...page.children] : page.children;
      next = page.next ?? null;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        status.textContent = errorText(err);
        return;
      }
      shown = [];
      next = null;
    }
    status.textContent = shown.length
      ? `${shown.length}${next !== null ? "+" : ""} calls`
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
        h("pre", { class: "prompt", id: "run-prompt-text", tabindex: 0 }, promptText(await api.prompt(vid))),
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
    { class: "node", "aria-labelledby": "runs-title" },
    h(
      "nav",
      { class: "breadcrumb", "aria-label": "Breadcrumb" },
      h(
        "ol",
        {},
        h("li", {}, h("a", { href: routeUrl({ view: "tools" }) }, "Tools")),
        h("li", {}, h("span", { "aria-current": "location" }, `run ${vid}`)),
      ),
    ),
    h("h1", { id: "runs-title" }, "Records of ", h("code", {}, vid)),
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
