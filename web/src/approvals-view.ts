import { dirs } from "../../shared/keys.js";
import { printable } from "../../tools/catalogue/printable.js";
import { approvalTitle } from "../../tools/gate/approval-wording.js";
import type { Api, PendingApproval } from "./api.js";
import { approveButtons } from "./approve-buttons.js";
import { toast } from "./dialogs.js";
import { formatTime, h, replace } from "./dom.js";
import { elicitationParts } from "./elicit-card.js";
import type { Change } from "./watch.js";

/**
 * The calls waiting for a person, always on screen while there are any: the tool, its arguments
 * (and the diff of a change to what a person wrote), and Approve / Deny. It re-reads the list
 * whenever the watch reports a change under /byteseek/approval/, so it is live. With `empty`, the
 * panel stays on screen when nothing waits and says so (the overview's card).
 */
export function createApprovalsPanel(api: Api, el: HTMLElement, options: { empty?: string } = {}) {
  let loading: Promise<void> | null = null;
  let again = false;

  async function load(): Promise<void> {
    let pending: PendingApproval[];
    try {
      pending = (await api.approvals()).pending;
    } catch {
      return; // no runtime on this server (404), or offline: nothing to show
    }
    el.hidden = pending.length === 0 && options.empty === undefined;
    replace(
      el,
      h("h2", {}, `Waiting for your approval (${pending.length})`),
      pending.length === 0 && options.empty ? h("p", { class: "muted" }, options.empty) : null,
      ...pending.map(function card(p) {
        const e = p.entry;
        const facts = {
          tool: e.tool,
          vid: e.vid,
          ...(e.change ? { change: e.change } : {}),
          ...(e.declDiff ? { declDiff: e.declDiff } : {}),
          ...(e.elicitation ? { elicitation: e.elicitation } : {}),
        };
        if (e.elicitation)
          return h(
            "article",
            {
              class: "approval",
              "data-approval": p.key,
              "aria-label": `${e.elicitation.server} asks a question`,
            },
            h("h3", {}, printable(approvalTitle(facts))),
            h("p", { class: "meta" }, printable(`run ${e.vid} · ${formatTime(e.ts)} · ${p.key}`)),
            ...elicitationParts(
              api,
              p.key,
              e.elicitation,
              (action) => {
                toast(printable(`Answered ${e.elicitation?.server} (${action}) · ${p.key}`));
                reload();
              },
              "panel",
            ),
          );
        const decide =
          (decision: "approve" | "deny", scope?: "once" | "run" | "always") => async (ev: Event) => {
            const button = ev.currentTarget as HTMLButtonElement;
            button.disabled = true;
            try {
              const decided = (await api.decide(p.key, decision, scope)).entry.decision;
              // the credential it was decided with, as the entry keeps it for the audit
              const via = decided?.via ? ` via ${decided.via}` : "";
              toast(
                printable(`${decision === "approve" ? "Approved" : "Denied"} ${e.tool} (${p.key})${via}`),
              );
            } catch (err) {
              toast(`Could not decide ${p.key}: ${(err as Error).message}`, "error");
            }
            reload();
          };
        return h(
          "article",
          { class: "approval", "data-approval": p.key, "aria-label": `${e.tool} waits for approval` },
          h("h3", {}, printable(approvalTitle(facts))),
          h("p", { class: "meta" }, printable(`run ${e.vid} · ${formatTime(e.ts)} · ${p.key}`)),
          h("p", { class: "reason" }, printable(e.reason.split("\n")[0] ?? "")),
          // what will actually run, after substitution: what the person approves
          e.effect ? h("p", { class: "effect" }, "runs: ", h("code", {}, printable(e.effect.text))) : null,
          e.owner || e.decl
            ? h(
                "p",
                { class: "meta owner" },
                printable(
                  `declared by ${e.owner ?? "?"}${e.decl ? ` · sha256 ${e.decl.hash.slice(0, 12)}` : ""}`,
                ),
              )
            : null,
          e.declDiff
            ? h(
                "div",
                { class: "decl-diff" },
                h("p", {}, "Changed since a person approved it for good:"),
                h("pre", { class: "diff" }, printable(e.declDiff, { lines: true })),
              )
            : null,
          e.change
            ? h("pre", { class: "diff" }, printable(e.change.diff, { lines: true }))
            : h("pre", { class: "args" }, printable(JSON.stringify(e.args, null, 2), { lines: true })),
          // only the scopes this kind of approval takes (tools/gate/approval-wording.ts)
          approveButtons(facts, decide),
        );
      }),
    );
  }

  /** Re-reads the list; a request made while one runs is folded into one more read after it. */
  function reload(): void {
    if (loading) {
      again = true;
      return;
    }
    loading = load().finally(() => {
      loading = null;
      if (again) {
        again = false;
        reload();
      }
    });
  }

  return {
    reload,
    onChanges(changes: Change[]): void {
      if (changes.some((c) => c.key.startsWith(dirs.approvals) || `${c.key}/` === dirs.approvals)) reload();
    },
  };
}
