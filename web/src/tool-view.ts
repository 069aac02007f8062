/**
 * One tool's page (`/tools/<name>`): what a person reviews — kind, what it runs, owner, hash and
 * acceptance, confirm / enabled / approval, the diff of its last change, its recent calls — with
 * Accept, Require approval and Disable (tool-review.ts); then a form generated from its `params` and
 * the result of a call made through `POST /v1/tools/<name>/call`. It follows the tree live.
 */
import { dirs, keys, runDirs } from "../../shared/keys.js";
import { printable } from "../../tools/catalogue/printable.js";
import { type Api, ApiError, type HistoryEntry, type ValueNode } from "./api.js";
import { h, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { createSchemaForm, type JsonSchema } from "./schema-form.js";
import { createToolCalls } from "./tool-calls-view.js";
import { badge, debounced, errorText, type ToolEntry, toolEntry, toolsBreadcrumb } from "./tool-parts.js";
import { reviewSection } from "./tool-review.js";
import { readUpstreamPin, type UpstreamPin } from "./upstream-pin.js";
import type { View } from "./view-parts.js";
import type { Change } from "./watch.js";

/** A read that answers undefined for a missing key (404) instead of failing. */
async function orMissing<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}

/** One tool: its review, its recent calls, a form generated from its `params`, and the result of a call. */
export function createToolView(api: Api, name: string): View {
  const declKey = keys.tool(name);
  const body = h("div", {}, h("p", { class: "muted" }, "loading…"));
  const review = h("div", { id: "review-slot" });
  const calls = createToolCalls(api, name);
  const el = h(
    "section",
    { class: "node", "aria-labelledby": "tool-title" },
    toolsBreadcrumb(name),
    h("h1", { id: "tool-title" }, name),
    review,
    body,
  );

  /** Re-reads what the review shows: the catalogue's entry, the stored declaration, its history. */
  async function loadReview(): Promise<ToolEntry | undefined> {
    let entry: ToolEntry | undefined;
    let node: ValueNode | undefined;
    let history: HistoryEntry[] = [];
    let upstream: UpstreamPin | undefined;
    try {
      [entry, node] = await Promise.all([toolEntry(api, name), orMissing(api.get(declKey))]);
      const impl =
        node?.value && typeof node.value === "object" && !Array.isArray(node.value)
          ? node.value.impl
          : undefined;
      // a first version has no history to ask for (the server answers 404)
      [history, upstream] = await Promise.all([
        node && node.version > 1 ? orMissing(api.history(declKey)).then((h) => h ?? []) : [],
        readUpstreamPin(api, impl),
      ]);
    } catch (err) {
      replace(review, h("p", { class: "error" }, `Could not read ${name}: ${errorText(err)}`));
      return undefined;
    }
    if (!entry) {
      replace(
        review,
        h(
          "p",
          {},
          `No tool ${name} is declared. `,
          h("a", { href: routeUrl({ view: "tree", key: declKey }) }, `Declare it at ${declKey}`),
          ".",
        ),
      );
      return undefined;
    }
    replace(
      review,
      entry.tool?.description ? h("p", { class: "description" }, entry.tool.description) : null,
      reviewSection(
        api,
        { entry, node, history, ...(upstream ? { upstream } : {}) },
        () => void loadReview(),
      ),
      h("h2", {}, "Recent calls"),
      calls.el,
    );
    return entry;
  }

  function renderCall(entry: ToolEntry): void {
    const { tool: decl, ...tool } = entry;
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
        const r = await api.call(name, {
          args: args.value,
          vid: vid.value.trim() || "web",
          ...(approve.checked ? { approve: true } : {}),
        });
        const { kind, record } = r;
        replace(
          result,
          h(
            "div",
            { class: "result", "data-kind": kind },
            h("h2", {}, "Result ", badge(kind)),
            h("pre", { class: "prompt", id: "call-result-text" }, r.text),
            Object.keys(r.details).length
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
      tool.problems.length
        ? h(
            "div",
            {},
            h(
              "p",
              {},
              "This declaration is invalid, so the tool is left out of the model's tool list; a call answers kind vet:",
            ),
            h("ul", { class: "problems" }, ...tool.problems.map((p) => h("li", {}, printable(p)))),
          )
        : null,
      h("h2", {}, "Call it"),
      h(
        "form",
        { id: "call-form", onsubmit: (e: Event) => void call(e) },
        form.el,
        h("label", { for: vid.id }, `Run (vid): the record goes to ${runDirs.records("<vid>")}`),
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

  async function load(): Promise<void> {
    const entry = await loadReview();
    if (entry) renderCall(entry);
    else replace(body);
  }

  const refreshReview = debounced(() => void loadReview());
  const refreshCalls = debounced(() => calls.reload(), 150);
  void load();
  return {
    el,
    reload: () => {
      void load();
      calls.reload();
    },
    onChanges(changes: Change[]) {
      if (
        changes.some(
          (c) =>
            // another declaration too: the built-in an alias runs decides whether the alias is off
            c.key.startsWith(dirs.tools) ||
            c.key === keys.toolAccept(name) ||
            c.key === keys.policy ||
            c.key.startsWith(dirs.mcpServers) ||
            c.key.startsWith(dirs.mcpSync),
        )
      )
        refreshReview();
      if (changes.some((c) => c.key.startsWith(dirs.records))) refreshCalls();
    },
  };
}
