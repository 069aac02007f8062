/**
 * One tool's page (`/tools/<name>`): its declaration, a form generated from its `params`, and the
 * result of a call made through `POST /v1/tools/<name>/call`.
 */
import { printable } from "../../tools/printable.js";
import type { Api } from "./api.js";
import { toast } from "./dialogs.js";
import { h, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { createSchemaForm, type JsonSchema } from "./schema-form.js";
import { badge, errorText, type ToolEntry, toolEntries, toolsBreadcrumb } from "./tool-parts.js";
import type { View } from "./view-parts.js";

/** One tool: its declaration, a form generated from its `params`, and the result of a call. */
export function createToolView(api: Api, name: string): View {
  const body = h("div", {}, h("p", { class: "muted" }, "loading…"));
  const el = h(
    "section",
    { class: "node", "aria-labelledby": "tool-title" },
    toolsBreadcrumb(name),
    h("h1", { id: "tool-title" }, name),
    body,
  );

  /**
   * A run's tool: who declared it and its hash; until a person accepts this version, other runs are
   * neither offered it nor able to call it (policy agentTools.share), and Accept does that.
   */
  function acceptance(owner: string, hash: string, accepted: boolean): HTMLElement {
    const button = h(
      "button",
      { type: "button", class: "primary", id: "accept-tool" },
      "Accept for every run",
    );
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        await api.acceptTool(name, hash);
        toast(`Accepted ${name}: every run is offered it`);
      } catch (err) {
        toast(`Could not accept ${name}: ${errorText(err)}`, "error");
      }
      void load();
    });
    return h(
      "div",
      { class: "agent-tool", "data-accepted": accepted ? "yes" : "no" },
      h(
        "p",
        { class: "meta" },
        printable(`declared by run ${owner} · sha256 ${hash.slice(0, 12)} · `),
        accepted ? "accepted for every run" : "not accepted: other runs are not offered it",
      ),
      accepted ? null : button,
    );
  }

  async function load(): Promise<void> {
    let entry: ToolEntry | undefined;
    try {
      entry = (await toolEntries(api)).find((t) => t.name === name);
    } catch (err) {
      replace(body, h("p", { class: "error" }, `GET /v1/tools: ${errorText(err)}`));
      return;
    }
    if (!entry) {
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
      h(
        "p",
        {},
        badge(tool.status),
        decl?.blocked ? h("span", { class: "kind-badge kind-denied" }, "blocked") : null,
        " ",
        h("a", { href: routeUrl({ view: "tree", key: tool.key }) }, tool.key),
      ),
      decl?.description ? h("p", { class: "description" }, decl.description) : null,
      decl?.blocked ? h("p", { class: "problems" }, decl.blocked) : null,
      decl?.owner !== undefined && decl.hash !== undefined
        ? acceptance(decl.owner, decl.hash, decl.accepted === true)
        : null,
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
