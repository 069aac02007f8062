#!/usr/bin/env node
/**
 * The `byteseek` executable:
 *   byteseek serve                    the HTTP server (server/main.ts reads the environment)
 *   byteseek run "task" [--vid V] [--send-key]   one agent turn, shown by turn-view.ts
 *   byteseek run --replay V [--live-tools]       a finished run again, from its records (replay-session.ts)
 *   byteseek chat [--vid V] [--send-key]         turns read from a `byteseek> ` prompt; `exit` leaves
 *   byteseek mcp [--vid V]            an MCP server on stdio (cli/mcp.ts)
 * `run` and `chat` work on the store at KVSPACE (a folder, default ./data, or etcd://…), or through
 * a byteseek server when KVSPACE is its http:// URL (agent-session.ts: the person's model settings
 * go with each turn, the key only with --send-key). Exit status: 0 when the turn(s) ended normally, 1
 * otherwise, 2 on a usage error.
 */
import { createInterface } from "node:readline";
import type { AgentEvent, TurnResult } from "../agent/events.js";
import { newVid } from "../agent/loop.js";
import { VID } from "../mcp/server.js";
import { startServer } from "../server/main.js";
import { withdrawSecrets } from "../tools/process/secrets.js";
import { openSession, type Session } from "./agent-session.js";
import { decisionOf } from "./approval-answer.js";
import {
  ByteseekUsageError,
  type ReplayOptions,
  runByteseekCli,
  type ServeOptions,
} from "./byteseek-program.js";
import { runMcp } from "./mcp.js";
import { replayFromStore } from "./replay-session.js";
import { replayReportLines } from "./replay-view.js";
import { canSpin, createTurnView, type TurnView, wantsColor } from "./turn-view.js";

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

/**
 * On a terminal, a call waiting for approval is asked about inline (y = once, r = this run,
 * a = always, n = no); elsewhere the printer's line says how to decide it from another shell.
 */
function withInlineApprovals(
  view: TurnView,
  session: Session,
  ask: ((question: string) => Promise<string>) | undefined,
): (e: AgentEvent) => void {
  return function onEvent(e: AgentEvent) {
    view.onEvent(e);
    if (e.type !== "approval_pending" || !ask) return;
    void ask(`approve ${e.name}? [y]es once, [r] for this run, [a]lways, [n]o: `)
      .then(async (answer) => {
        const decision = decisionOf(answer);
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
  const session = await openSession({ env, cwd: process.cwd(), ...(sendKey ? { sendKey } : {}) });
  for (const note of session.notes) err.write(`${note}\n`);
  return session;
}

async function run(
  task: string,
  { vid = newVid(), sendKey }: { vid?: string; sendKey?: boolean },
): Promise<number> {
  const session = await startSession(sendKey);
  const sig = interrupts();
  const rl = process.stdin.isTTY
    ? createInterface({ input: process.stdin, output: out, terminal: true })
    : undefined;
  const ask = rl ? (q: string) => new Promise<string>((res) => rl.question(q, res)) : undefined;
  const view = turnView();
  try {
    err.write(`vid ${vid}\n`);
    const result = await session.runTurn(task, vid, sig.signal(), withInlineApprovals(view, session, ask));
    return report(result, session);
  } finally {
    view.pause();
    rl?.close();
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
  const rl = createInterface({ input: process.stdin, output: out, terminal: Boolean(process.stdin.isTTY) });
  rl.setPrompt("byteseek> ");
  const ask = process.stdin.isTTY
    ? (q: string) => new Promise<string>((res) => rl.question(q, res))
    : undefined;
  const view = turnView();
  const print = withInlineApprovals(view, session, ask);
  let turn: AbortController | undefined;
  let status = 0;
  rl.on("SIGINT", () => {
    if (turn && !turn.signal.aborted) turn.abort();
    else rl.close();
  });
  try {
    out.write(`byteseek chat (vid ${vid}); "exit" leaves\n`);
    rl.prompt();
    for await (const raw of rl) {
      const input = raw.trim();
      if (input === "exit" || input === "quit") break;
      if (input !== "") {
        turn = new AbortController();
        try {
          const result = await session.runTurn(input, vid, turn.signal, print);
          status = report(result, session);
        } catch (e) {
          view.pause();
          err.write(`byteseek: ${(e as Error).message}\n`);
          status = 1;
        }
        turn = undefined;
      }
      rl.prompt();
    }
    if (!process.stdin.isTTY) out.write("\n");
    return status;
  } finally {
    rl.close();
    await session.close();
  }
}

async function serve({ noAuth }: ServeOptions): Promise<number> {
  const server = await startServer({ env, ...(noAuth ? { noAuth } : {}) });
  // Once, for a person, as Jupyter does; the logs never carry the token.
  err.write(
    server.token === undefined
      ? `byteseek: serving ${server.pageUrl} WITHOUT a credential (--no-auth): anyone who reaches it can run commands as this user\n`
      : `byteseek: open ${server.pageUrl} (the token ${server.tokenFile ? `is kept in ${server.tokenFile}` : server.config.auth === "env" ? "is BYTESEEK_TOKEN" : "was made for this start: set BYTESEEK_TOKEN to keep one"}; clients send it as Authorization: Bearer <token>)\n`,
  );
  return 0;
}

async function mcp({ vid }: { vid?: string }): Promise<number> {
  if (vid !== undefined && !VID.test(vid))
    throw new ByteseekUsageError(
      `--vid ${JSON.stringify(vid)} is not a run id: letters, digits and _.:@- (at most 128)`,
    );
  return runMcp({ env, cwd: process.cwd(), ...(vid === undefined ? {} : { vid }) });
}

process.exitCode = await runByteseekCli(
  process.argv.slice(2),
  { stdout: out, stderr: err },
  { serve, run, replay, chat, mcp },
);
