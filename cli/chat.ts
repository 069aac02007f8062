/**
 * `byteseek chat`: turns read from a `byteseek> ` prompt (chat-input.ts: `\` continues a line, a
 * paste is one message), with commands answered here, never sent to the model:
 *   /help  /clear (a new run)  /model [NAME]  /cost  /tools  /runs  /exit
 * and `@path` mentions: each file named so is read with edit.read — through the call boundary, its
 * gate and its record, as the model's own reads — and its content goes with the message.
 */
import type { AgentEvent, TurnResult } from "../agent/events.js";
import { newVid } from "../tools/run-id.js";
import type { Session } from "./agent-session.js";
import type { ChatInput } from "./chat-input.js";

export interface ChatDeps {
  session: Session;
  input: ChatInput;
  out: { write(text: string): unknown };
  err: { write(text: string): unknown };
  /** The run the first turn belongs to. */
  vid: string;
  /** Prints a turn's events (and asks about approvals on a terminal). */
  onEvent(e: AgentEvent): void;
  /** Says how a turn ended when it did not end with an answer; answers the exit status. */
  report(r: TurnResult): number;
  /** Stops the spinner before a line is printed outside a turn. */
  pause(): void;
  /** The first line's words: the run and the workspace. */
  header(vid: string): string;
  /** A controller per turn; its abort stops the turn (Ctrl-C). */
  newTurn(): AbortController;
}

export const CHAT_HELP = [
  "/help          this list",
  "/clear         start a new run: the model forgets the conversation (the old run stays in the tree)",
  "/model [NAME]  the model the next turn uses; with NAME, use that model from now on",
  "/cost          tokens and tool calls of this chat so far",
  "/tools         the tools the model is offered",
  "/runs          the agent runs in the store and their state",
  "/exit          leave (also exit, quit, Ctrl-D)",
  "A line ending with \\ goes on on the next; on a terminal a pasted block is one message.",
  "@path sends a workspace file's content with the message (read with edit.read, gated and recorded).",
].join("\n");

/** `@path` mentions: an @ at the start of a word, the path up to the next space. */
const MENTION = /(^|\s)@([^\s@]+)/g;

export function mentionsOf(message: string): string[] {
  return [...new Set([...message.matchAll(MENTION)].map((m) => (m[2] as string).replace(/[.,;:!?)]+$/, "")))];
}

interface Totals {
  turns: number;
  steps: number;
  calls: number;
  failed: number;
  inputTokens: number;
  outputTokens: number;
}

export async function runChat(d: ChatDeps): Promise<number> {
  let vid = d.vid;
  let status = 0;
  const totals: Totals = { turns: 0, steps: 0, calls: 0, failed: 0, inputTokens: 0, outputTokens: 0 };
  d.out.write(`byteseek chat (${d.header(vid)}); "exit" leaves, /help for more\n`);
  for (;;) {
    const message = await d.input.read("byteseek> ");
    if (message === undefined) break;
    const text = message.trim();
    if (text === "exit" || text === "quit" || text === "/exit" || text === "/quit") break;
    if (text === "") continue;
    if (text.startsWith("/")) {
      const next = await command(text, vid);
      if (next !== undefined) vid = next;
      continue;
    }
    const sent = await withMentions(message, vid);
    if (sent === undefined) continue;
    const turn = d.newTurn();
    try {
      const result = await d.session.runTurn(sent, vid, turn.signal, d.onEvent);
      count(result);
      status = d.report(result);
    } catch (e) {
      d.pause();
      d.err.write(`byteseek: ${(e as Error).message}\n`);
      status = 1;
    }
  }
  return status;

  function count(r: TurnResult): void {
    totals.turns++;
    totals.steps += r.steps;
    totals.calls += r.calls.length;
    totals.failed += r.calls.filter((c) => c.isError).length;
    totals.inputTokens += r.usage.inputTokens;
    totals.outputTokens += r.usage.outputTokens;
  }

  /** A local command; answers the run id to go on with when it changes. */
  async function command(text: string, current: string): Promise<string | undefined> {
    const [name, ...rest] = text.split(/\s+/);
    const arg = rest.join(" ");
    try {
      switch (name) {
        case "/help":
          d.out.write(`${CHAT_HELP}\n`);
          return undefined;
        case "/clear": {
          const fresh = newVid();
          d.out.write(`new run ${fresh}: the model starts afresh (run ${current} stays in the tree)\n`);
          return fresh;
        }
        case "/model":
          if (arg !== "") {
            d.session.setModel(arg);
            d.out.write(`the next turns use model ${arg}\n`);
          }
          d.out.write(`${await d.session.model()}\n`);
          return undefined;
        case "/cost":
          d.out.write(
            `this chat: ${totals.turns} turn${totals.turns === 1 ? "" : "s"} · ${totals.steps} steps · ` +
              `${totals.calls} tool calls${totals.failed ? `, ${totals.failed} failed` : ""} · ` +
              `${totals.inputTokens} tokens in, ${totals.outputTokens} out (run ${current})\n`,
          );
          return undefined;
        case "/tools": {
          const tools = await d.session.tools(current);
          for (const t of tools) d.out.write(`${t.name}\t${t.snippet}\n`);
          d.out.write(`(${tools.length} tool${tools.length === 1 ? "" : "s"} offered to run ${current})\n`);
          return undefined;
        }
        case "/runs": {
          const runs = await d.session.runs(50);
          for (const r of runs) d.out.write(`${r.vid === current ? "*" : " "} ${r.vid}\t${r.status}\n`);
          if (!runs.some((r) => r.vid === current)) d.out.write(`* ${current}\t(no turn yet)\n`);
          return undefined;
        }
        default:
          d.out.write(
            `${name} is not a chat command (/help lists them); to send it to the model, start the line with a space\n`,
          );
          return undefined;
      }
    } catch (e) {
      d.err.write(`byteseek: ${name}: ${(e as Error).message}\n`);
      return undefined;
    }
  }

  /** The message with each mentioned file's content after it, or undefined when one could not be read (said why). */
  async function withMentions(message: string, current: string): Promise<string | undefined> {
    const paths = mentionsOf(message);
    if (paths.length === 0) return message;
    const parts = [message];
    for (const path of paths) {
      const read = await d.session.call("edit.read", { path }, current);
      if (read.isError) {
        d.err.write(
          `byteseek: @${path}: ${read.text.split("\n")[0]} (not sent; fix the mention and send again)\n`,
        );
        return undefined;
      }
      d.out.write(`(@${path}: read with edit.read${read.record ? `, ${read.record}` : ""})\n`);
      parts.push(`\n\n<file path="${path}">\n${read.text.replace(/\n?$/, "\n")}</file>`);
    }
    return parts.join("");
  }
}
