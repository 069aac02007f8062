/**
 * A run's page (`/runs/<vid>`): its status, model, workspace, policy grant, steps and tokens
 * (GET /v1/agent/runs/<vid>), the actions a person takes on it — Resume an interrupted run, Replay
 * a finished one (kept as a new run), Compare with another — and its calls with their records.
 * It follows the run live: every change the watch brings under the run's keys re-reads it.
 */
import { keys, runDirs } from "../../shared/keys.js";
import { type Api, ApiError } from "./api.js";
import { formatTime, h, replace } from "./dom.js";
import { routeUrl } from "./keys.js";
import { createRecordsSection } from "./records-view.js";
import { createRunDiffBox } from "./run-diff-view.js";
import { runsBreadcrumb, statusBadge } from "./runs-view.js";
import { debounced, errorText } from "./tool-parts.js";
import type { View } from "./view-parts.js";
import type { ReplayJson, RunDetail, TurnJson } from "./wire.js";

/** What became of an interrupted call on resume (agent/resume.ts), said for a person. */
const DECISION: Record<string, string> = {
  not_started: "had not started: it ran now",
  recorded: "had finished: its recorded result was fed back, nothing ran again",
  rerun: "ran again (a read, or an edit whose files were as before)",
  resent: "was sent again with the same idempotency key",
  applied: "had already been applied (the files are as it intended): not run again",
  file_changed: "was not run: its file changed since; the model was told",
  unknown:
    "was not run again: whether it took effect is unknown (the process died during it); the model was told",
};

/** The 409s of resume and replay, as a person reads them. */
const REFUSAL: Record<string, string> = {
  AGENT_NOT_INTERRUPTED: "Nothing to resume",
  AGENT_RUN_BUSY: "Another process is running this run",
  AGENT_RUN_NOT_FINISHED: "Only a finished run replays",
  AGENT_RUN_NOT_FOUND: "No such run",
};

export function createRunView(api: Api, vid: string): View {
  const status = h("p", { id: "run-status", role: "status" }, "loading…");
  const meta = h("dl", { class: "meta run-meta" });
  const outcome = h("div", { id: "run-action-result", "aria-live": "polite" });
  const resumeButton = h(
    "button",
    { type: "button", id: "run-resume", class: "primary", disabled: true },
    "Resume",
  );
  const live = h("input", { type: "checkbox", id: "run-replay-live" });
  const replayButton = h("button", { type: "button", id: "run-replay", disabled: true }, "Replay");
  const diff = createRunDiffBox(api, vid);
  const records = createRecordsSection(api, vid);
  let workspace: string | undefined;
  let shown: RunDetail | undefined;
  let busy = false;

  api.info().then(
    (info) => {
      workspace = info.workspace;
      if (shown) show(shown);
    },
    () => {},
  );

  async function load(): Promise<void> {
    try {
      show(await api.run(vid));
    } catch (err) {
      shown = undefined;
      status.dataset.status = "missing";
      status.textContent =
        err instanceof ApiError && err.status === 404
          ? `There is no run ${vid} (yet): this page shows it once it starts.`
          : `GET /v1/agent/runs/${vid}: ${errorText(err)}`;
      replace(meta);
    }
  }

  function show(r: RunDetail): void {
    shown = r;
    status.dataset.status = r.status;
    replace(status, statusBadge(r.status), " ", statusLine(r));
    const entries: Array<[string, Node | string]> = [
      ["Model", r.model ?? "—"],
      ["Workspace", workspace ?? "—"],
      ["Policy grant", grantText(r)],
      ["Started", r.started ? formatTime(r.started) : "—"],
      ["Steps", String(r.steps)],
      ["Calls", String(r.calls)],
      ["Tokens", `${r.tokens.input} in, ${r.tokens.output} out`],
      ["Tools used", r.tools?.join(", ") || "—"],
    ];
    if (r.client)
      entries.push([
        "MCP client",
        `${r.client.name ?? "unnamed"}${r.client.version ? ` ${r.client.version}` : ""}${r.client.transport ? ` (${r.client.transport})` : ""}`,
      ]);
    if (r.replayOf)
      entries.push([
        "Replay of",
        h(
          "span",
          {},
          h("a", { href: routeUrl({ view: "runs", vid: r.replayOf.of }) }, r.replayOf.of),
          r.replayOf.live ? ` (tools ran again: ${r.replayOf.executed})` : " (from the records: nothing ran)",
          r.replayOf.diverged ? ` — ${r.replayOf.diverged}` : " — step for step the same",
        ),
      ]);
    if (r.waiting)
      entries.push(["Waiting for", h("a", { href: routeUrl({ view: "tree", key: r.waiting }) }, r.waiting)]);
    if (r.inProgress) entries.push(["Call in progress", r.inProgress]);
    if (r.reason) entries.push(["How it ended", r.reason]);
    replace(meta, ...entries.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
    resumeButton.disabled = busy || r.status !== "interrupted";
    replayButton.disabled = busy || (r.status !== "done" && r.status !== "failed");
  }

  async function act<T>(label: string, run: () => Promise<T>, done: (v: T) => void): Promise<void> {
    busy = true;
    resumeButton.disabled = true;
    replayButton.disabled = true;
    replace(outcome, h("p", { class: "muted" }, `${label}…`));
    try {
      done(await run());
    } catch (err) {
      replace(outcome, refusal(err));
    } finally {
      busy = false;
      await load();
    }
  }

  function resumed(t: TurnJson): void {
    replace(
      outcome,
      h(
        "p",
        { "data-outcome": "resumed" },
        `Resumed: the turn ended (${t.reason}) after ${plural(t.steps, "step")}.`,
      ),
      t.resumed?.length
        ? h(
            "ul",
            { class: "resumed-calls" },
            ...t.resumed.map((c) =>
              h(
                "li",
                { "data-decision": c.decision },
                h("code", {}, c.name),
                ` (${c.id}) ${DECISION[c.decision] ?? c.decision}`,
                c.approval
                  ? h(
                      "span",
                      {},
                      " — ",
                      h("a", { href: routeUrl({ view: "tree", key: c.approval }) }, c.approval),
                    )
                  : null,
              ),
            ),
          )
        : h("p", { class: "muted" }, "No call was left unanswered."),
      t.text ? h("pre", { class: "result" }, t.text) : null,
    );
  }

  function replayed(r: ReplayJson): void {
    replace(
      outcome,
      h(
        "p",
        { "data-outcome": r.divergence ? "diverged" : "same" },
        "Replayed as ",
        h("a", { href: routeUrl({ view: "runs", vid: r.vid }), id: "run-replay-link" }, r.vid),
        `: ${plural(r.steps, "step")}, ${plural(r.calls, "call")}, ${r.executed} executed, ${plural(r.modelRequests, "model request")} — `,
        r.divergence
          ? `differs at step ${r.divergence.step}: ${r.divergence.summary}`
          : "step for step the same.",
      ),
      ...r.notes.map((n) => h("p", { class: "muted" }, `Note: ${n.text}`)),
    );
    diff.compareWith(r.vid);
  }

  resumeButton.addEventListener("click", () => void act("Resuming", () => api.resume(vid), resumed));
  replayButton.addEventListener(
    "click",
    () => void act("Replaying", () => api.replay(vid, live.checked), replayed),
  );

  const el = h(
    "section",
    { class: "node run-page", "aria-labelledby": "run-title" },
    runsBreadcrumb(vid),
    h("h1", { id: "run-title" }, "Run ", h("code", {}, vid)),
    status,
    meta,
    h(
      "div",
      { class: "actions run-actions" },
      resumeButton,
      replayButton,
      h("label", { class: "check", for: "run-replay-live" }, live, " run the tools again"),
      h("a", { href: routeUrl({ view: "agent", vid }) }, "Continue in the chat"),
    ),
    outcome,
    diff.el,
    records.el,
  );
  void load();
  const refresh = debounced(() => void load());
  const own = [runDirs.state(vid), runDirs.sessions(vid), keys.usage(vid), keys.policy];
  return {
    el,
    reload() {
      void load();
      records.reload?.();
    },
    onChanges(changes) {
      records.onChanges?.(changes);
      if (
        changes.some((c) => own.some((p) => c.key.startsWith(p)) || (c.type === "deltree" && c.key === "/"))
      )
        refresh();
    },
  };
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function statusLine(r: RunDetail): string {
  switch (r.status) {
    case "running":
      return r.waiting ? "waiting for a person's approval" : "running now";
    case "interrupted":
      return "its process stopped: Resume continues it without redoing what finished";
    case "done":
      return "finished";
    case "failed":
      return "ended with an error";
    case "session":
      return "an MCP host's session: its calls, no turn loop";
  }
}

function grantText(r: RunDetail): string {
  if (!r.grant) return "the policy does not validate: every call is refused";
  const p = r.grant.powers;
  const on = (["read", "write", "exec", "model"] as const).filter((k) => p[k]);
  return `${on.join(", ") || "no file, command or model powers"}; net: ${p.net.join(", ") || "none"}; tree: ${p.tree.join(", ") || "none"} (${r.grant.rule})`;
}

function refusal(err: unknown): HTMLElement {
  const lead = err instanceof ApiError ? REFUSAL[err.code] : undefined;
  return h(
    "p",
    { class: "error", "data-code": err instanceof ApiError ? err.code : "" },
    lead ? `${lead}: ` : "",
    errorText(err),
  );
}
