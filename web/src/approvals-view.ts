import type { Api, PendingApproval } from "./api.js";
import { toast } from "./dialogs.js";
import { formatTime, h, replace } from "./dom.js";
import type { Change } from "./watch.js";

const APPROVAL_DIR = "/byteseek/approval/";

/**
 * The calls waiting for a person, always on screen while there are any: the tool, its arguments
 * (and the diff of a change to what a person wrote), and Approve / Deny. It re-reads the list
 * whenever the watch reports a change under /byteseek/approval/, so it is live.
 */
export function createApprovalsPanel(api: Api, el: HTMLElement) {
  let loading: Promise<void> | null = null;
  let again = false;

  async function load(): Promise<void> {
    let pending: PendingApproval[];
    try {
      pending = (await api.approvals()).pending;
    } catch {
      return; // no runtime on this server (404), or offline: nothing to show
    }
    el.hidden = pending.length === 0;
    replace(
      el,
      h("h2", {}, `Waiting for your approval (${pending.length})`),
      ...pending.map(function card(p) {
        const e = p.entry;
        const decide = (decision: "approve" | "deny", scope?: "once" | "run") => async (ev: Event) => {
          const button = ev.currentTarget as HTMLButtonElement;
          button.disabled = true;
          try {
            await api.decide(p.key, decision, scope);
            toast(`${decision === "approve" ? "Approved" : "Denied"} ${e.tool} (${p.key})`);
          } catch (err) {
            toast(`Could not decide ${p.key}: ${(err as Error).message}`, "error");
          }
          reload();
        };
        return h(
          "article",
          { class: "approval", "data-approval": p.key, "aria-label": `${e.tool} waits for approval` },
          h("h3", {}, e.change ? `${e.tool} wants to change ${e.change.key}` : `${e.tool} wants to run`),
          h("p", { class: "meta" }, `run ${e.vid} · ${formatTime(e.ts)} · ${p.key}`),
          h("p", { class: "reason" }, e.reason.split("\n")[0] ?? ""),
          e.change
            ? h("pre", { class: "diff" }, e.change.diff)
            : h("pre", { class: "args" }, JSON.stringify(e.args, null, 2)),
          h(
            "div",
            { class: "actions" },
            h("button", { class: "primary", type: "button", onclick: decide("approve", "once") }, "Approve"),
            e.change
              ? null
              : h("button", { type: "button", onclick: decide("approve", "run") }, "Approve for this run"),
            h("button", { class: "danger", type: "button", onclick: decide("deny") }, "Deny"),
          ),
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
      if (changes.some((c) => c.key.startsWith(APPROVAL_DIR) || `${c.key}/` === APPROVAL_DIR)) reload();
    },
  };
}
