#!/usr/bin/env node
/**
 * The `byteseek` executable:
 *   byteseek serve                    the HTTP server (server/main.ts reads the environment)
 *   byteseek run "task" [--vid V]     one agent turn, streaming the answer and each tool call
 *   byteseek chat [--vid V]           turns read from a `byteseek> ` prompt; `exit` leaves
 *   byteseek mcp [--vid V]            an MCP server on stdio (cli/mcp.ts)
 * `run` and `chat` work on the store at KVSPACE (a folder, default ./data, or etcd://…), or through
 * a byteseek server when KVSPACE is its http:// URL. Exit status: 0 when the turn(s) ended normally, 1
 * otherwise, 2 on a usage error.
 */
import { createInterface } from "node:readline";
import type { Writable } from "node:stream";
import { pino } from "pino";
import { request } from "undici";
import { createByteseek } from "../agent/byteseek.js";
import type { AgentEvent, TurnResult } from "../agent/loop.js";
import { newVid } from "../agent/loop.js";
import { VID } from "../mcp/server.js";
import { startServer } from "../server/main.js";
import type { ApprovalDecision } from "../tools/approvals.js";
import { withdrawSecrets } from "../tools/process/secrets.js";
import { readSse } from "../tree/http/index.js";
import type { Tree } from "../tree/types.js";
import { decisionOf } from "./approval-answer.js";
import { ByteseekUsageError, runByteseekCli } from "./byteseek-program.js";
import { runMcp } from "./mcp.js";
import { openStore, storeSpec } from "./open-store.js";

/** One turn, wherever it runs: events are shown as they come, the result answered at the end. */
type RunTurn = (
  input: string,
  vid: string,
  signal: AbortSignal,
  onEvent: (e: AgentEvent) => void,
) => Promise<TurnResult>;

interface Session {
  runTurn: RunTurn;
  /** A person's decision on an approval key (the inline question on a terminal). */
  decide(key: string, decision: ApprovalDecision): Promise<void>;
  close(): Promise<void>;
}

const out = process.stdout;
const err = process.stderr;
// the token and model keys stay with byteseek: out of its process environment (and /proc/<pid>/environ)
// before anything can start a command; the settings are read from this copy
const env = withdrawSecrets().env;

/** Prints a turn as it happens: the answer's text, and one line per tool call with its kind. */
function createPrinter(stream: Writable): (e: AgentEvent) => void {
  let atLineStart = true;
  const write = (text: string) => {
    if (text === "") return;
    stream.write(text);
    atLineStart = text.endsWith("\n");
  };
  const line = (text: string) => write(`${atLineStart ? "" : "\n"}${text}\n`);
  return function print(e: AgentEvent) {
    switch (e.type) {
      case "text_delta":
        write(e.delta);
        break;
      case "tool_start":
        line(`→ ${e.name} ${shorten(JSON.stringify(e.args) ?? "", 160)}`);
        break;
      case "tool_result": {
        const first = e.isError ? ` — ${shorten(e.text.split("\n")[0] ?? "", 160)}` : "";
        line(`  ${e.kind}${e.record ? ` ${e.record}` : ""}${first}`);
        break;
      }
      case "retry":
        line(`(model call failed, retrying in ${e.delayMs} ms: ${e.reason})`);
        break;
      case "approval_pending": {
        const id = e.key.replace("/byteseek/approval/", "");
        line(`  waiting for approval ${e.key}: ${shorten(e.reason.split("\n")[0] ?? "", 160)}`);
        if (e.diff) write(`${e.diff.endsWith("\n") ? e.diff : `${e.diff}\n`}`);
        line(`  decide with: kvspace approve ${id} [--scope once|run|always]  |  kvspace deny ${id}`);
        break;
      }
      case "turn_end":
        if (!atLineStart) write("\n");
        break;
      default:
        break;
    }
  };
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const ok = (r: TurnResult) => r.reason === "done" || r.reason === "terminated";

/** Says how the turn ended when it did not end with an answer; answers the exit status. */
function report(r: TurnResult): number {
  if (ok(r)) return 0;
  err.write(`byteseek: the turn stopped (${r.reason}): ${r.text}\n`);
  return 1;
}

async function openSession(): Promise<Session> {
  const spec = storeSpec(env);
  if (spec.backend === "http") return remoteSession(new URL(spec.url));
  const logger = pino({ level: env.BYTESEEK_LOG_LEVEL || "warn" }, pino.destination(2));
  const tree: Tree = await openStore({ env, cwd: process.cwd(), logger: logger.child({ part: "tree" }) });
  try {
    const bs = await createByteseek({
      tree,
      workspace: env.BYTESEEK_WORKSPACE || process.cwd(),
      logger,
      env,
      ...(spec.backend === "classic" ? { storePath: spec.location } : {}),
    });
    return {
      runTurn: (input, vid, signal, onEvent) => bs.agent.runTurn({ input, vid, signal, onEvent }),
      async decide(key, decision) {
        await bs.runtime.approvals.decide(key, decision, "person (terminal)");
      },
      async close() {
        await bs.close();
        await tree.close();
      },
    };
  } catch (e) {
    await tree.close();
    throw e;
  }
}

/** Turns run by a byteseek server: POST /v1/agent/turn, its events read as server-sent events. */
function remoteSession(base: URL): Session {
  const url = new URL("v1/agent/turn", base.href.endsWith("/") ? base : `${base.href}/`);
  return {
    async runTurn(input, vid, signal, onEvent) {
      const res = await request(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "text/event-stream",
          ...(env.BYTESEEK_TOKEN ? { authorization: `Bearer ${env.BYTESEEK_TOKEN}` } : {}),
        },
        body: JSON.stringify({ vid, input }),
        signal,
      });
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        let message = text;
        try {
          message = (JSON.parse(text) as { error: { message: string } }).error.message;
        } catch {
          // not our error body: shown as it is
        }
        throw new Error(`${url.origin} answered ${res.statusCode}: ${message}`);
      }
      let result: TurnResult | undefined;
      for await (const ev of readSse(res.body)) {
        const data = JSON.parse(ev.data) as AgentEvent | { code: string; message: string };
        if (ev.event === "error") continue; // turn_end carries it
        const e = data as AgentEvent;
        if (e.type === "turn_end") result = e.result;
        onEvent(e);
      }
      if (!result) throw new Error(`${url.origin} ended the stream before the turn ended`);
      return result;
    },
    async decide(key, decision) {
      const id = key.replace("/byteseek/approval/", "");
      const res = await request(new URL(`v1/approvals/${id}`, url.href.replace(/v1\/agent\/turn$/, "")), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(env.BYTESEEK_TOKEN ? { authorization: `Bearer ${env.BYTESEEK_TOKEN}` } : {}),
        },
        body: JSON.stringify(decision),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`${url.origin} answered ${res.statusCode}: ${text.slice(0, 200)}`);
    },
    async close() {},
  };
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
  print: (e: AgentEvent) => void,
  session: Session,
  ask: ((question: string) => Promise<string>) | undefined,
): (e: AgentEvent) => void {
  return function onEvent(e: AgentEvent) {
    print(e);
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

async function run(task: string, { vid = newVid() }: { vid?: string }): Promise<number> {
  const session = await openSession();
  const sig = interrupts();
  const rl = process.stdin.isTTY
    ? createInterface({ input: process.stdin, output: out, terminal: true })
    : undefined;
  const ask = rl ? (q: string) => new Promise<string>((res) => rl.question(q, res)) : undefined;
  try {
    err.write(`vid ${vid}\n`);
    const result = await session.runTurn(
      task,
      vid,
      sig.signal(),
      withInlineApprovals(createPrinter(out), session, ask),
    );
    return report(result);
  } finally {
    rl?.close();
    sig.dispose();
    await session.close();
  }
}

async function chat({ vid = newVid() }: { vid?: string }): Promise<number> {
  const session = await openSession();
  const rl = createInterface({ input: process.stdin, output: out, terminal: Boolean(process.stdin.isTTY) });
  rl.setPrompt("byteseek> ");
  const ask = process.stdin.isTTY
    ? (q: string) => new Promise<string>((res) => rl.question(q, res))
    : undefined;
  const print = withInlineApprovals(createPrinter(out), session, ask);
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
          status = report(result);
        } catch (e) {
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

async function serve(): Promise<number> {
  await startServer({ env });
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
  { serve, run, chat, mcp },
);
