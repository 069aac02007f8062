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

export function createRunDiffBox(api: Api, vid: string): HTMLElement {
  const other = h("input", {
    id: "run-diff-other",
    type: "text",
    placeholder: "another run's id",
    autocomplete: "off",
    spellcheck: false,
  });
  const out = h("div", { id: "run-diff-result", role: "status" });
  async function compare(e: Event): Promise<void> {
    e.preventDefault();
    const b = other.value.trim();
    if (b === "") return;
    replace(out, h("p", { class: "muted" }, "Comparing…"));
    try {
      replace(out, ...shown(await api.diffRuns(vid, b)));
    } catch (err) {
      replace(out, h("p", { class: "error" }, `GET /v1/agent/runs/${vid}/diff/${b}: ${errorText(err)}`));
    }
  }
  return h(
    "details",
    { class: "history", id: "run-diff" },
    h("summary", {}, `Compare ${vid} with another run`),
    h(
      "form",
      { onsubmit: (e: Event) => void compare(e) },
      h("label", { for: "run-diff-other" }, "Run "),
      other,
      " ",
      h("button", { type: "submit" }, "Compare"),
    ),
    out,
  );
}

function shown(d: RunDiffJson): HTMLElement[] {
  const div = d.divergence;
  if (!div)
    return [
      h("p", { "data-identical": "true" }, `The same: ${d.steps.a} steps, ${d.calls.a} calls, each equal.`),
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
