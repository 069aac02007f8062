/**
 * The agent on the page (`/agent/`, `/agent/<vid>` to go on with a run): a message box that
 * starts a turn, the answer streamed as it comes, each tool call with its arguments and result,
 * and a call waiting for approval decided right where it waits (its box closes once decided).
 * The model's answers are rendered as markdown by a renderer that never parses HTML (./markdown.ts).
 * The model is picked from those the server lists (`GET /v1/info`); the workspace is shown above.
 * Every message of a page's session goes to one run; "New run" starts another.
 */

import { dirs, runDirs, runOf } from "../../shared/keys.js";
import { approvalTitle } from "../../tools/gate/approval-wording.js";
import type { Api } from "./api.js";
import { approveButtons } from "./approve-buttons.js";
import { toast } from "./dialogs.js";
import { append, h, replace } from "./dom.js";
import { elicitationParts } from "./elicit-card.js";
import { encodeKeyPath } from "./keys.js";
import { renderMarkdown } from "./markdown.js";
import { streamTurn } from "./turn-stream.js";
import type { TurnJson, TurnStreamEvent } from "./wire.js";

const RESULT_LINES = 12;

export function createChatView(api: Api, startVid?: string): { el: HTMLElement } {
  let vid = startVid;
  let running: AbortController | null = null;

  const runLine = h("p", { class: "meta chat-run" });
  const where = h("p", { class: "meta chat-where" }, "\u00a0");
  const model = h("select", { id: "chat-model" });
  const modelField = h(
    "span",
    { class: "chat-model", hidden: true },
    h("label", { for: "chat-model" }, "Model"),
    model,
  );
  /** The model the server runs a turn with when the turn names none. */
  let defaultModel: string | undefined;
  const log = h("ol", { class: "chat-log", role: "log", "aria-label": "Conversation" });
  const status = h("p", { class: "chat-status", role: "status", "aria-live": "polite" });
  const input = h("textarea", {
    id: "chat-input",
    rows: 3,
    placeholder: "Ask the agent… (Enter sends, Shift+Enter for a new line)",
    spellcheck: "true",
  });
  const send = h("button", { class: "primary", type: "submit" }, "Send");
  const stop = h("button", { type: "button", hidden: true, onclick: () => running?.abort() }, "Stop");
  const fresh = h(
    "button",
    {
      type: "button",
      onclick: () => {
        if (running) return;
        vid = undefined;
        log.replaceChildren();
        status.textContent = "";
        showRun();
        history.replaceState(null, "", "/agent/");
        input.focus();
      },
    },
    "New run",
  );
  const form = h(
    "form",
    { class: "chat-form", onsubmit: submit },
    h("label", { for: "chat-input" }, "Message"),
    input,
    h("div", { class: "actions" }, send, stop, fresh, modelField),
  );
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  const el = h("section", { class: "chat" }, h("h1", {}, "Agent"), where, runLine, log, status, form);
  showRun();
  void api.info().then(
    (info) => {
      const llm = info.llm;
      replace(
        where,
        "workspace: ",
        info.workspace ? h("code", {}, info.workspace) : "none",
        llm && !llm.configured ? h("span", { class: "warn-text" }, ` · ${llm.problem ?? "no model"}`) : null,
      );
      if (!llm?.configured || llm.models.length === 0) return;
      defaultModel = llm.model;
      replace(model, ...llm.models.map((m) => h("option", { value: m }, m)));
      model.value = llm.model ?? llm.models[0] ?? "";
      modelField.hidden = false;
    },
    () => {},
  );
  if (vid) void loadConversation(api, vid, log);

  function showRun(): void {
    if (!vid) replace(runLine, "A new run: its id comes with the first answer.");
    else
      replace(
        runLine,
        "Run ",
        h("code", {}, vid),
        " · ",
        h("a", { href: `/runs/${encodeURIComponent(vid)}` }, "its tool-call records"),
      );
  }

  async function submit(e: Event): Promise<void> {
    e.preventDefault();
    const text = input.value.trim();
    if (text === "" || running) return;
    input.value = "";
    log.append(h("li", { class: "msg user" }, text));
    const ac = new AbortController();
    running = ac;
    send.disabled = true;
    stop.hidden = false;
    const turn = createTurnRenderer(api, log, status);
    try {
      // a model other than the server's default goes with the turn; the URL and key stay the server's
      const picked = modelField.hidden || model.value === defaultModel ? {} : { llm: { model: model.value } };
      await streamTurn(
        api,
        { input: text, ...(vid ? { vid } : {}), ...picked },
        (ev) => {
          if (ev.type === "turn_start" && ev.vid !== vid) {
            vid = ev.vid;
            showRun();
            history.replaceState(null, "", `/agent/${encodeURIComponent(ev.vid)}`);
          }
          turn.onEvent(ev);
        },
        ac.signal,
      );
    } catch (err) {
      turn.fail(ac.signal.aborted ? "Stopped." : (err as Error).message);
    } finally {
      running = null;
      send.disabled = false;
      stop.hidden = true;
      turn.finish();
    }
  }

  return { el };
}

/** A message of a run as the tree keeps it at /byteseek/session/<vid>/<n>. */
type StoredMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; text: string; toolCalls: Array<{ id: string; name: string; argsText: string }> }
  | { role: "tool"; toolCallId: string; name: string; content: string; isError: boolean };

/** Draws the run's messages so far, so `/agent/<vid>` opens on the conversation it continues. */
async function loadConversation(api: Api, vid: string, log: HTMLElement): Promise<void> {
  const calls = new Map<string, HTMLElement>();
  let after: string | undefined;
  try {
    do {
      const page = await api.list(runDirs.sessions(vid), { limit: 500, ...(after ? { after } : {}) });
      for (const child of page.children) {
        const m = child.value as unknown as StoredMessage | undefined;
        if (!m || typeof m !== "object") continue;
        if (m.role === "user") log.append(h("li", { class: "msg user" }, m.content));
        else if (m.role === "assistant") {
          if (m.text) log.append(h("li", { class: "msg assistant" }, renderMarkdown(m.text)));
          for (const c of m.toolCalls ?? []) {
            const li = callItem(c.name, parseArgs(c.argsText));
            calls.set(c.id, li);
            log.append(li);
          }
        } else if (m.role === "tool") {
          const li = calls.get(m.toolCallId);
          if (!li) continue;
          li.dataset.state = m.isError ? "error" : "ok";
          const kind = li.querySelector(".kind");
          if (kind) kind.textContent = m.isError ? "failed" : "ok";
          li.append(h("pre", { class: "result" }, firstLines(m.content)));
        }
      }
      after = page.next ?? undefined;
    } while (after);
  } catch (err) {
    // a run with no messages yet (404) starts empty; anything else is said
    if ((err as { status?: number }).status !== 404)
      toast(`Could not read the run's messages: ${(err as Error).message}`, "error");
  }
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A tool call's entry in the log: its name, state and arguments. */
function callItem(name: string, args: unknown): HTMLElement {
  return h(
    "li",
    { class: "tool-call", "data-tool": name, "data-state": "running" },
    h("p", { class: "call" }, "→ ", h("strong", {}, name), " ", h("span", { class: "kind" }, "running…")),
    h("pre", { class: "args" }, shorten(JSON.stringify(args, null, 2) ?? "", 2000)),
  );
}

function firstLines(text: string): string {
  const lines = text.replace(/\n+$/, "").split("\n");
  const shown = lines.slice(0, RESULT_LINES).join("\n");
  return lines.length > RESULT_LINES ? `${shown}\n… ${lines.length - RESULT_LINES} more lines` : shown;
}

/** Draws one turn's events into the log. */
function createTurnRenderer(api: Api, log: HTMLElement, status: HTMLElement) {
  let answer: { li: HTMLElement; text: string; drawn: boolean } | null = null;
  let failed = false;
  let ended = false;
  const calls = new Map<string, { li: HTMLElement; started: number }>();
  const writing = new Map<number, { name: string; bytes: number }>();

  function say(text: string): void {
    status.textContent = text;
  }

  /** Renders the answer so far, at most once per frame while it streams. */
  function draw(a: { li: HTMLElement; text: string; drawn: boolean }): void {
    if (!a.drawn) return;
    a.drawn = false;
    requestAnimationFrame(() => {
      a.drawn = true;
      a.li.replaceChildren(renderMarkdown(a.text));
    });
  }

  function onEvent(e: TurnStreamEvent): void {
    switch (e.type) {
      case "step":
        answer = null;
        say("Waiting for the model…");
        break;
      case "text_delta":
        if (!answer) {
          answer = { li: h("li", { class: "msg assistant" }), text: "", drawn: true };
          log.append(answer.li);
        }
        answer.text += e.delta;
        draw(answer);
        say("The model is answering…");
        break;
      case "toolcall_start":
        writing.set(e.index, { name: e.name, bytes: 0 });
        say(`The model is writing a call of ${e.name}…`);
        break;
      case "toolcall_delta": {
        const w = writing.get(e.index);
        if (w) {
          w.bytes += e.delta.length;
          say(`The model is writing a call of ${w.name} (${w.bytes} characters)…`);
        }
        break;
      }
      case "retry":
        say(`The model call failed; retrying in ${Math.round(e.delayMs / 100) / 10} s (${e.reason})`);
        break;
      case "tool_start": {
        answer = null;
        const li = callItem(e.name, e.args);
        log.append(li);
        calls.set(e.id, { li, started: performance.now() });
        say(`Running ${e.name}…`);
        break;
      }
      case "approval_pending":
        calls.get(e.id)?.li.append(approvalCard(api, e));
        say(`${e.name} waits for your approval.`);
        break;
      case "tool_result": {
        const call = calls.get(e.id);
        if (!call) break;
        const ms = Math.round(performance.now() - call.started);
        call.li.dataset.state = e.isError ? "error" : "ok";
        call.li.dataset.kind = e.kind;
        // a box still open was decided elsewhere (the overview, another tab, the CLI): it closes too
        const box = call.li.querySelector<HTMLElement>(".approval-inline");
        if (box) box.replaceWith(box.querySelector(".decided") ?? closedLine(box, e.kind));
        const kind = call.li.querySelector(".kind");
        if (kind) kind.textContent = `${e.kind} · ${ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`}`;
        append(
          call.li,
          h("pre", { class: "result" }, firstLines(e.text)),
          e.record ? h("a", { class: "record", href: `/ui/${encodeKeyPath(e.record)}` }, e.record) : null,
        );
        say("Waiting for the model…");
        break;
      }
      case "error":
        fail(e.message);
        break;
      case "turn_end":
        ended = true;
        end(e.result);
        break;
      default:
        break;
    }
  }

  function fail(message: string): void {
    if (failed) return;
    failed = true;
    log.append(h("li", { class: "msg error", role: "alert" }, message));
  }

  function end(r: TurnJson): void {
    if (r.reason !== "done" && r.reason !== "terminated") fail(`The turn stopped (${r.reason}): ${r.text}`);
    const n = r.calls.length;
    const failures = r.calls.filter((c) => c.isError).length;
    const summary =
      `${r.steps} step${r.steps === 1 ? "" : "s"} · ${n} tool call${n === 1 ? "" : "s"}` +
      `${failures ? ` (${failures} failed)` : ""} · ${r.usage.inputTokens} tokens in, ${r.usage.outputTokens} out`;
    log.append(h("li", { class: "summary" }, summary));
    say("");
  }

  return {
    onEvent,
    fail,
    /** The stream ended: a turn that never said it ended is marked as cut. */
    finish(): void {
      if (!ended) {
        fail("The turn's stream ended before the turn did.");
        say("");
      }
    },
  };
}

/** Approve / Approve for this run / Deny, for a call that waits where it is shown. */
function approvalCard(api: Api, e: Extract<TurnStreamEvent, { type: "approval_pending" }>): HTMLElement {
  const vid = runOf(dirs.approvals, e.key);
  const facts = {
    tool: e.name,
    ...(vid ? { vid } : {}),
    ...(e.change ? { change: e.change } : {}),
    ...(e.declDiff ? { declDiff: e.declDiff } : {}),
    ...(e.elicitation ? { elicitation: e.elicitation } : {}),
  };
  if (e.elicitation) {
    const card: HTMLElement = h(
      "div",
      { class: "approval-inline", "data-approval": e.key, "data-elicitation": "1" },
      h("p", { class: "reason" }, approvalTitle(facts)),
      ...elicitationParts(
        api,
        e.key,
        e.elicitation,
        (action) =>
          card.querySelector(".actions")?.replaceWith(h("p", { class: "decided" }, `Answered: ${action}.`)),
        "chat",
      ),
    );
    return card;
  }
  const decide = (decision: "approve" | "deny", scope?: "once" | "run" | "always") => async (ev: Event) => {
    const card = (ev.currentTarget as HTMLElement).closest(".approval-inline");
    for (const b of card?.querySelectorAll("button") ?? []) b.disabled = true;
    try {
      await api.decide(e.key, decision, scope);
      // the box closes: what was decided stays as one line
      card?.replaceWith(decidedLine(decision === "approve" ? "Approved." : "Denied."));
    } catch (err) {
      toast(`Could not decide ${e.key}: ${(err as Error).message}`, "error");
      for (const b of card?.querySelectorAll("button") ?? []) b.disabled = false;
    }
  };
  return h(
    "div",
    { class: "approval-inline", "data-approval": e.key },
    h("p", { class: "reason" }, `Waiting for your approval: ${approvalTitle(facts)}`),
    h("p", { class: "meta" }, e.reason.split("\n")[0] ?? ""),
    e.diff ? h("pre", { class: "diff" }, e.diff) : null,
    // only the scopes this kind of approval takes (tools/gate/approval-wording.ts)
    approveButtons(facts, decide),
  );
}

/** The line left where a box still open stood when its call's result came. */
function closedLine(box: HTMLElement, kind: string): HTMLElement {
  // a question answered here whose answer's response has not come back yet ("Answered: accept.")
  if (box.dataset.answering) return decidedLine(`Answered: ${box.dataset.answering}.`);
  // a question answered from the CLI, another tab or the MCP host
  if (box.dataset.elicitation) return decidedLine("Answered elsewhere.");
  return decidedLine(kind === "denied" ? "Denied." : "Approved.");
}

function decidedLine(text: string): HTMLElement {
  return h("p", { class: "decided" }, text);
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
