/**
 * A tool's recent calls across every run (`GET /v1/tools/<name>/calls`), newest first: when, which
 * run, how it went and what the model was told — each linked to its record.
 */
import { printable } from "../../tools/catalogue/printable.js";
import type { Api } from "./api.js";
import { formatTime, h, preview, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { badge, errorText } from "./tool-parts.js";

export function createToolCalls(api: Api, name: string): { el: HTMLElement; reload(): void } {
  const el = h("div", { id: "recent-calls", "aria-live": "polite" }, h("p", { class: "muted" }, "loading…"));

  async function load(): Promise<void> {
    let answer: Awaited<ReturnType<Api["toolCalls"]>>;
    try {
      answer = await api.toolCalls(name);
    } catch (err) {
      replace(el, h("p", { class: "error" }, `GET /v1/tools/${name}/calls: ${errorText(err)}`));
      return;
    }
    const { calls, complete } = answer;
    if (!calls.length) {
      replace(
        el,
        h(
          "p",
          { class: "muted" },
          `No calls of ${name} are recorded${complete ? "" : " among the records read"}.`,
        ),
      );
      return;
    }
    const failed = calls.filter((c) => c.isError).length;
    replace(
      el,
      h(
        "p",
        { class: "muted", role: "status" },
        `The last ${calls.length} call${calls.length === 1 ? "" : "s"}: ${failed} failed.`,
        complete ? "" : " (The server had too many records to read them all: older calls may be missing.)",
      ),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "listing" },
          h("caption", { class: "visually-hidden" }, `Recent calls of ${name}`),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["time", "run", "record", "outcome", "took", "what the model was told"].map((c) =>
                h("th", { scope: "col" }, c),
              ),
            ),
          ),
          h(
            "tbody",
            {},
            ...calls.map((c) =>
              h(
                "tr",
                { "data-record": c.key, "data-kind": c.kind, "data-state": c.state },
                h("td", {}, formatTime(c.ts)),
                h("td", {}, h("a", { href: routeUrl({ view: "runs", vid: c.vid }) }, printable(c.vid))),
                h(
                  "td",
                  { class: "num" },
                  h("a", { href: routeUrl({ view: "tree", key: c.key }) }, String(c.n)),
                ),
                h("td", {}, c.state === "started" ? badge("started") : badge(c.kind)),
                h("td", { class: "num" }, c.state === "started" ? "" : `${Math.round(c.ms)} ms`),
                h("td", { class: "text-cell" }, printable(preview(c.text, 140))),
              ),
            ),
          ),
        ),
      ),
    );
  }

  void load();
  return { el, reload: () => void load() };
}
