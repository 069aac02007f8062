/**
 * The Compare box of a run's page: another run's id, and where the two diverge first (what the
 * model was asked, its answer, a tool call or a call's result) with the short diff the server
 * sends (GET /v1/agent/runs/<a>/diff/<b>, as `kvspace runs diff` prints it).
 */
import type { Api } from "./api.js";
import { h, replace } from "./dom.js";
import { errorText } from "./tool-parts.js";
import type { RunDiffJson } from "./wire.js";

const KIND: Record<NonNullable<RunDiffJson["divergence"]>["kind"], string> = {
  prompt: "what the model was asked",
  answer: "the model's answer",
  call: "the tool call",
  result: "the tool result",
  end: "how the runs ended",
};

export interface RunDiffBox {
  el: HTMLDetailsElement;
  /** Opens the box and compares with run `b` (a replay just made, say). */
  compareWith(b: string): void;
}

export function createRunDiffBox(api: Api, vid: string): RunDiffBox {
  const other = h("input", {
    id: "run-diff-other",
    type: "text",
    placeholder: "another run's id",
    autocomplete: "off",
    spellcheck: false,
    list: "run-diff-runs",
  });
  // the runs to pick from, read when the box opens
  const runs = h("datalist", { id: "run-diff-runs" });
  const out = h("div", { id: "run-diff-result", role: "status" });
  async function compare(e?: Event): Promise<void> {
    e?.preventDefault();
    const b = other.value.trim();
    if (b === "") return;
    replace(out, h("p", { class: "muted" }, "Comparing…"));
    try {
      replace(out, ...shown(await api.diffRuns(vid, b)));
    } catch (err) {
      replace(out, h("p", { class: "error" }, `GET /v1/agent/runs/${vid}/diff/${b}: ${errorText(err)}`));
    }
  }
  const el = h(
    "details",
    { class: "history", id: "run-diff" },
    h("summary", {}, `Compare ${vid} with…`),
    h(
      "form",
      { onsubmit: (e: Event) => void compare(e) },
      h("label", { for: "run-diff-other" }, "Run "),
      other,
      runs,
      " ",
      h("button", { type: "submit" }, "Compare"),
    ),
    out,
  );
  el.addEventListener("toggle", () => {
    if (!el.open || runs.childElementCount > 0) return;
    api.runs({ limit: 200 }).then(
      (page) =>
        replace(runs, ...page.runs.filter((r) => r.vid !== vid).map((r) => h("option", { value: r.vid }))),
      () => {},
    );
  });
  return {
    el,
    compareWith(b) {
      other.value = b;
      el.open = true;
      void compare();
    },
  };
}

function shown(d: RunDiffJson): HTMLElement[] {
  const div = d.divergence;
  if (!div)
    return [
      h(
        "p",
        { "data-identical": "true" },
        `The same: ${d.steps.a} step${d.steps.a === 1 ? "" : "s"}, ${d.calls.a} call${d.calls.a === 1 ? "" : "s"}, each equal.`,
      ),
    ];
  const call = div.call ? `, call ${div.call}${div.tool ? ` ${div.tool}` : ""}` : "";
  return [
    h(
      "p",
      { "data-kind": div.kind },
      h("strong", {}, `Step ${div.step}`),
      ` (turn ${div.turn}, step ${div.turnStep})${call}: ${KIND[div.kind]} differs. `,
      div.summary,
    ),
    ...(div.diff.length ? [h("pre", { class: "diff" }, div.diff.join("\n"))] : []),
  ];
}
