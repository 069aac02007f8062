/**
 * The buttons that decide an approval, wherever one is shown (the approvals panel, the overview,
 * a call waiting in the chat): one Approve per scope this kind of approval takes
 * (tools/gate/approval-wording.ts: once, for the run, always), the first the primary one, then Deny.
 */
import { type ApprovalFacts, scopesFor } from "../../tools/gate/approval-wording.js";
import { h } from "./dom.js";

export type Decision = "approve" | "deny";
export type Scope = "once" | "run" | "always";

/** `decide(decision, scope)` answers the click handler of one button. */
export function approveButtons(
  facts: ApprovalFacts,
  decide: (decision: Decision, scope?: Scope) => (ev: Event) => void | Promise<void>,
): HTMLElement {
  return h(
    "div",
    { class: "actions" },
    ...scopesFor(facts).map((o) =>
      h(
        "button",
        {
          ...(o.scope === "once" ? { class: "primary" } : {}),
          type: "button",
          title: o.covers,
          onclick: decide("approve", o.scope),
        },
        o.label,
      ),
    ),
    h("button", { class: "danger", type: "button", onclick: decide("deny") }, "Deny"),
  );
}
