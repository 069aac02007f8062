#!/usr/bin/env node
/**
 * The `byteseek` executable:
 *   byteseek serve                    the HTTP server (server/main.ts reads the environment)
 *   byteseek run "task" [--vid V] [--send-key]   one agent turn, shown by turn-view.ts
 *   byteseek run --resume V           continue run V whose process died (agent/resume.ts)
 *   byteseek run --replay V [--live-tools]       a finished run again, from its records (replay-session.ts)
 *   byteseek chat [--vid V] [--send-key]         turns read from a `byteseek> ` prompt; `exit` leaves
 *   byteseek mcp [--vid V]            an MCP server on stdio (cli/mcp.ts)
 * `run` and `chat` work on the store at KVSPACE (a folder, default ./data, or etcd://…), or through
 * a byteseek server when KVSPACE is its http:// URL (agent-session.ts: the person's model settings
 * go with each turn, the key only with --send-key). Exit status: 0 when the turn(s) ended normally, 1
 * otherwise, 2 on a usage error.
 */
import type { AgentEvent, TurnResult } from "../agent/events.js";
import { terminalKeys, terminalQuestion } from "../tools/gate/approval-wording.js";
import type { ApprovalDecision } from "../tools/gate/approvals.js";
import { withdrawSecrets } from "../tools/process/secrets.js";
import { newVid, RUN_ID } from "../tools/run-id.js";
import type { Session } from "./agent-session.js";
import {
  ByteseekUsageError,
  type ReplayOptions,
  runByteseekCli,
  type ServeOptions,
} from "./byteseek-program.js";
import { runChat } from "./chat.js";
import { createChatInput } from "./chat-input.js";
import { askForm, formFields, schemaCheck } from "./form-answer.js";
import { askKey } from "./key-answer.js";
import { replayReportLines } from "./replay-view.js";
import { canSpin, createTurnView, factsOf, type TurnView, wantsColor } from "./turn-view.js";

// Each command imports what only it needs when it runs (the server, the MCP server, the agent's
// composition: ~1.5 s of CPU each), so a turn through a server or a relayed `byteseek mcp` starts
// without loading the others.
const load = {
  session: () => import("./agent-session.js"),
  server: () => import("../server/main.js"),
  mcp: () => import("./mcp.js"),
  replay: () => import("./replay-session.js"),
};

const out = process.stdout;
const err = process.stderr;
// the token and model keys stay with byteseek: out of its process environment (and /proc/<pid>/environ)
// before anything can start a command; the settings are read from this copy
const env = withdrawSecrets().env;

const ok = (r: TurnResult) => r.reason === "done" || r.reason === "terminated";

/** Says how the turn ended when it did not end with an answer; answers the exit status. */
function report(r: TurnResult, session: Session): number {
  if (ok(r)) return 0;
  const logs = r.reason === "model_error" && session.logFile ? ` (logs: ${session.logFile})` : "";
  err.write(`byteseek: the turn stopped (${r.reason}): ${r.text}${logs}\n`);
  return 1;
}

/** Aborts the turn in progress on SIGINT/SIGTERM; a second signal exits at once. */
function interrupts(): { signal(): AbortSignal; dispose(): void } {
  let current = new AbortController();
  const onSignal = () => {
    if (current.signal.aborted) process.exit(130);
    current.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal() {
      if (current.signal.aborted) current = new AbortController();
      return current.signal;
    },
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

/** Asks a person about an approval on the terminal (one key, no Enter); absent off a terminal. */
type AskApproval = (
  e: Extract<AgentEvent, { type: "approval_pending" }>,
  signal: AbortSignal,
) => Promise<ApprovalDecision | undefined>;

/**
 * The terminal's question: the keys the approval's kind offers (tools/gate/approval-wording.ts), answered
 * with one key in raw mode; an upstream's question accepted is followed by its form, one line a
 * field. Ctrl-C stops the turn (as it does while the model works).
 */
function terminalAsker(onInterrupt: () => void): AskApproval | undefined {
  const stdin = process.stdin;
  if (!stdin.isTTY) return undefined;
  return async (e, signal) => {
    const facts = factsOf(e);
    for (;;) {
      const answer = await askKey({
        input: stdin,
        output: out,
        question: terminalQuestion(facts),
        keys: terminalKeys(facts),
        signal,
      });
      if (answer.key === "interrupt") onInterrupt();
      if (!("value" in answer)) return undefined;
      if (answer.value === "cancel")
        return { decision: "deny", cancel: true, reason: "cancelled at the terminal" };
      if (answer.value === "deny") return { decision: "deny", reason: "denied at the terminal" };
      if (!e.elicitation) return { decision: "approve", scope: answer.value };
      // accept: the upstream's form, filled in line by line (form-answer.ts)
      const { schema } = e.elicitation;
      if (formFields(schema).length === 0) return { decision: "approve", scope: "once", content: {} };
      const filled = await askForm({ input: stdin, output: out, schema, check: schemaCheck(schema), signal });
      if ("content" in filled) return { decision: "approve", scope: "once", content: filled.content };
      if (filled.stopped === "interrupt") onInterrupt();
      if (filled.stopped !== "eof") return undefined;
      // Ctrl-D, or a form that still does not fit: accept / decline / cancel again
    }
  };
}

/**
 * On a terminal, a call waiting for approval is asked about inline, one key for an answer;
 * elsewhere the printer's line says how to decide it from another shell.
 */
function withInlineApprovals(
  view: TurnView,
  session: Session,
  ask: AskApproval | undefined,
): (e: AgentEvent) => void {
  // the question still open per call: its result (it was decided elsewhere: another shell, the web
  // page) or the turn's end closes it, so it takes no keys meant for what comes next
  const open = new Map<string, AbortController>();
  return function onEvent(e: AgentEvent) {
    view.onEvent(e);
    if (e.type === "tool_result") open.get(e.id)?.abort();
    if (e.type === "turn_end") for (const asking of open.values()) asking.abort();
    if (e.type !== "approval_pending" || !ask) return;
    view.pause();
    const asking = new AbortController();
    open.set(e.id, asking);
    void ask(e, asking.signal)
      .finally(() => {
        if (open.get(e.id) === asking) open.delete(e.id);
      })
      .then(async (decision) => {
        if (decision) await session.decide(e.key, decision);
      })
      .catch((error: unknown) => {
        // decided elsewhere meanwhile (409), or the server went away: the turn says how it ended
        err.write(`byteseek: ${(error as Error).message}\n`);
      });
  };
}

/** The turn view on stdout: colours and a spinner only where the terminal can show them. */
function turnView(): TurnView {
  return createTurnView({ out, color: wantsColor(out, env), spinner: canSpin(out, env) });
}

/** The session for run/chat, its notes (which model settings apply) said on stderr. */
async function startSession(sendKey: boolean | undefined): Promise<Session> {
  const { openSession } = await load.session();
  const session = await openSession({ env, cwd: process.cwd(), ...(sendKey ? { sendKey } : {}) });
  for (const note of session.notes) err.write(`${note}\n`);
  return session;
}

/** The first line of a run: its id, and the folder its file tools work in. */
function runLine(vid: string, session: Session): string {
  return `vid ${vid}${session.workspace === undefined ? "" : ` · workspace ${session.workspace}`}`;
}

async function run(
  task: string,
  { vid = newVid(), sendKey }: { vid?: string; sendKey?: boolean },
): Promise<number> {
  const session = await startSession(sendKey);
  const sig = interrupts();
  const ask = terminalAsker(() => process.kill(process.pid, "SIGINT"));
  const view = turnView();
  try {
    err.write(`${runLine(vid, session)}\n`);
    const result = await session.runTurn(task, vid, sig.signal(), withInlineApprovals(view, session, ask));
    return report(result, session);
  } finally {
    view.pause();
    sig.dispose();
    await session.close();
  }
}

/** `byteseek run --resume <vid>`: continues a run whose process died, shown as a turn is. */
async function resume(vid: string, { sendKey }: { sendKey?: boolean }): Promise<number> {
  const session = await startSession(sendKey);
  const sig = interrupts();
  const view = turnView();
  try {
    err.write(`vid ${vid} (resumed)\n`);
    const result = await session.resume(vid, sig.signal(), withInlineApprovals(view, session, undefined));
    for (const r of result.resumed ?? [])
      if (r.decision !== "not_started")
        err.write(
          `byteseek: resumed ${r.name} (${r.id}): ${r.decision}${r.approval ? ` (approval ${r.approval})` : ""}\n`,
        );
    return report(result, session);
  } finally {
    view.pause();
    sig.dispose();
    await session.close();
  }
}

/**
 * Re-draws each turn of run `vid` as `run` drew it, from its records (or, live, running the calls
 * again); stderr says what changed since and whether it diverged. Exit 0 as recorded, 1 diverged.
 */
async function replay(vid: string, { liveTools }: ReplayOptions): Promise<number> {
  const view = turnView();
  try {
    err.write(`replay of ${vid}${liveTools ? " (its tools run again)" : ""}\n`);
    const { replayFromStore } = await load.replay();
    const report = await replayFromStore({
      env,
      cwd: process.cwd(),
      vid,
      ...(liveTools ? { liveTools } : {}),
      onTurn: (turn, input) => {
        if (turn > 0) view.pause();
        err.write(`turn ${turn + 1}: ${input}\n`);
      },
      onEvent: (e) => view.onEvent(e),
    });
    view.pause();
    for (const line of replayReportLines(report)) err.write(`${line}\n`);
    return report.divergence ? 1 : 0;
  } finally {
    view.pause();
  }
}

async function chat({ vid = newVid(), sendKey }: { vid?: string; sendKey?: boolean }): Promise<number> {
  const session = await startSession(sendKey);
  const input = createChatInput(process.stdin, out);
  const sig = interrupts();
  const ask = terminalAsker(() => process.kill(process.pid, "SIGINT"));
  const view = turnView();
  try {
    return await runChat({
      session,
      input,
      out,
      err,
      vid,
      onEvent: withInlineApprovals(view, session, ask),
      report: (r) => report(r, session),
      pause: () => view.pause(),
      header: (v) => runLine(v, session),
      // a signal of its own per turn: Ctrl-C during a turn stops that turn (interrupts())
      newTurn: () => {
        const turn = new AbortController();
        const signal = sig.signal();
        signal.addEventListener("abort", () => turn.abort(), { once: true });
        return turn;
      },
    });
  } finally {
    if (!process.stdin.isTTY) out.write("\n");
    input.close();
    sig.dispose();
    await session.close();
  }
}

async function serve({ noAuth }: ServeOptions): Promise<number> {
  const { startServer } = await load.server();
  const server = await startServer({ env, ...(noAuth ? { noAuth } : {}) });
  // Once, for a person, as Jupyter does; the logs never carry the token.
  err.write(
    server.token === undefined
      ? `byteseek: serving ${server.pageUrl} (workspace ${server.config.workspace}) WITHOUT a credential (--no-auth): anyone who reaches it can run commands as this user\n`
      : `byteseek: open ${server.pageUrl} (workspace ${server.config.workspace}; the token ${server.tokenFile ? `is kept in ${server.tokenFile}` : server.config.auth === "env" ? "is BYTESEEK_TOKEN" : "was made for this start: set BYTESEEK_TOKEN to keep one"}; clients send it as Authorization: Bearer <token>)\n`,
  );
  return 0;
}

async function mcp({ vid }: { vid?: string }): Promise<number> {
  if (vid !== undefined && !RUN_ID.test(vid))
    throw new ByteseekUsageError(
      `--vid ${JSON.stringify(vid)} is not a run id: letters, digits and _.:@- (at most 128)`,
    );
  const { runMcp } = await load.mcp();
  return runMcp({ env, cwd: process.cwd(), ...(vid === undefined ? {} : { vid }) });
}

process.exitCode = await runByteseekCli(
  process.argv.slice(2),
  { stdout: out, stderr: err },
  { serve, run, resume, replay, chat, mcp },
);
