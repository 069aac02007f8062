/**
 * How `byteseek run` and `chat` show a turn: the answer as it streams, a spinner while nothing
 * else moves (the model thinking, writing a call's arguments, a tool running), each call with its
 * arguments and a short result (kind, time, first lines), and the turn's steps and tokens at the
 * end. Colours and the spinner only on a terminal that can draw them; piped output is plain text.
 */
import type { AgentEvent, TurnResult } from "../agent/events.js";
import { dirs, idOf, runOf } from "../shared/keys.js";
import { printable, printableValue } from "../tools/catalogue/printable.js";
import { type ApprovalFacts, decideLine } from "../tools/gate/approval-wording.js";
import { approvalLines } from "./approval-view.js";

export interface TurnViewOptions {
  /** Where the conversation goes (stdout). */
  out: { write(text: string): unknown };
  /** ANSI colours. */
  color: boolean;
  /** Redraw a spinner line in place (needs a terminal that understands `\r` and erase-line). */
  spinner: boolean;
  now?: () => number;
  /** Calls `fn` every frame until the returned function is called (default: an unref'd setInterval). */
  ticker?: (fn: () => void) => () => void;
  /** Lines of a tool's result shown under its call. */
  resultLines?: number;
}

export interface TurnView {
  onEvent(e: AgentEvent): void;
  /** Stops the spinner (an interrupted turn, a question to ask). */
  pause(): void;
}

/** Whether a stream gets colours: a terminal, NO_COLOR unset, TERM not `dumb`. */
export function wantsColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && !env.NO_COLOR && env.TERM !== "dumb";
}

/** Whether a stream can redraw a spinner line: a terminal other than `dumb`. */
export function canSpin(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && env.TERM !== "dumb";
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const ARGS_WIDTH = 160;
const LINE_WIDTH = 120;

type Paint = (text: string) => string;
function painter(color: boolean) {
  const sgr =
    (open: string): Paint =>
    (text) =>
      color && text !== "" ? `\x1b[${open}m${text}\x1b[0m` : text;
  return {
    dim: sgr("2"),
    bold: sgr("1"),
    red: sgr("31"),
    green: sgr("32"),
    yellow: sgr("33"),
    cyan: sgr("36"),
  };
}

function defaultTicker(fn: () => void): () => void {
  const timer = setInterval(fn, 80);
  timer.unref();
  return () => clearInterval(timer);
}

export function createTurnView(options: TurnViewOptions): TurnView {
  const { out, now = Date.now, ticker = defaultTicker, resultLines = 3 } = options;
  const paint = painter(options.color);
  let atLineStart = true;
  let spin: { label: string; detail: string; frame: number; stop: () => void } | undefined;
  /** The call whose arguments stream in, by index: its name and the bytes so far. */
  const streaming = new Map<number, { name: string; bytes: number }>();
  const started = new Map<string, number>();

  const write = (text: string) => {
    if (text === "") return;
    out.write(text);
    atLineStart = text.endsWith("\n");
  };
  const line = (text: string) => {
    stopSpinner();
    write(`${atLineStart ? "" : "\n"}${text}\n`);
  };

  function draw(): void {
    if (!spin) return;
    const frame = paint.cyan(FRAMES[spin.frame % FRAMES.length] ?? "");
    out.write(`\r\x1b[K${frame} ${paint.dim(spin.detail ? `${spin.label} (${spin.detail})` : spin.label)}`);
  }
  /** Shows `label` at once; a changed `detail` alone waits for the next frame (no redraw per delta). */
  function spinner(label: string, detail = ""): void {
    if (!options.spinner) return;
    if (spin) {
      const changed = spin.label !== label;
      spin.label = label;
      spin.detail = detail;
      if (changed) draw();
      return;
    }
    if (!atLineStart) write("\n");
    const s = { label, detail, frame: 0, stop: () => {} };
    spin = s;
    draw();
    s.stop = ticker(() => {
      s.frame++;
      draw();
    });
  }
  function stopSpinner(): void {
    if (!spin) return;
    spin.stop();
    spin = undefined;
    out.write("\r\x1b[K");
  }

  function showResult(e: Extract<AgentEvent, { type: "tool_result" }>): void {
    const t0 = started.get(e.id);
    started.delete(e.id);
    const took = t0 === undefined ? "" : ` in ${formatMs(now() - t0)}`;
    const mark = e.isError ? paint.red(`✗ ${e.kind}`) : paint.green(`✓ ${e.kind}`);
    line(`  ${mark}${paint.dim(`${took}${e.record ? ` · ${e.record}` : ""}`)}`);
    const lines = e.text.replace(/\n+$/, "").split("\n");
    const shown = e.text.trim() === "" ? [] : lines.slice(0, resultLines);
    for (const l of shown) line(paint.dim(`  │ ${shorten(l, LINE_WIDTH)}`));
    if (lines.length > shown.length && shown.length > 0)
      line(
        paint.dim(
          `  │ … ${lines.length - shown.length} more line${lines.length - shown.length === 1 ? "" : "s"}`,
        ),
      );
  }

  function onEvent(e: AgentEvent): void {
    switch (e.type) {
      case "step":
        spinner("waiting for the model");
        break;
      case "text_delta":
        stopSpinner();
        write(e.delta);
        break;
      case "toolcall_start":
        streaming.set(e.index, { name: e.name, bytes: 0 });
        spinner(`${e.name}: the model is writing the call`);
        break;
      case "toolcall_delta": {
        const call = streaming.get(e.index);
        if (!call) break;
        call.bytes += Buffer.byteLength(e.delta);
        spinner(`${call.name}: the model is writing the call`, formatBytes(call.bytes));
        break;
      }
      case "tool_start":
        streaming.clear();
        started.set(e.id, now());
        line(`${paint.bold(paint.yellow("→"))} ${paint.bold(e.name)} ${paint.dim(formatArgs(e.args))}`);
        spinner(`running ${e.name}`);
        break;
      case "tool_progress": {
        const step =
          e.progress === undefined ? "" : ` ${e.progress}${e.total === undefined ? "" : `/${e.total}`}`;
        const level = e.level && e.level !== "info" ? `${e.level}: ` : "";
        line(paint.dim(`  ${e.name}${step} ${level}${shorten(printable(e.message), ARGS_WIDTH)}`));
        break;
      }
      case "approval_pending": {
        const id = idOf(dirs.approvals, e.key);
        const [head, ...rest] = approvalLines(e);
        line(`  ${paint.yellow("waiting for approval")} ${e.key}: ${shorten(head ?? "", ARGS_WIDTH)}`);
        for (const l of rest) line(`  ${l}`);
        line(paint.dim(`  decide with: ${decideLine(id, factsOf(e))}`));
        break;
      }
      case "tool_result":
        showResult(e);
        break;
      case "retry":
        line(paint.yellow(`(model call failed, retrying in ${e.delayMs} ms: ${e.reason})`));
        spinner("waiting for the model");
        break;
      case "turn_end":
        line(paint.dim(summary(e.result)));
        break;
      default:
        break;
    }
  }

  return { onEvent, pause: stopSpinner };
}

/** What the approval wording (tools/gate/approval-wording.ts) reads of a pending approval's event. */
export function factsOf(e: Extract<AgentEvent, { type: "approval_pending" }>): ApprovalFacts {
  const vid = runOf(dirs.approvals, e.key);
  return {
    tool: e.name,
    ...(vid ? { vid } : {}),
    ...(e.change ? { change: e.change } : {}),
    ...(e.declDiff ? { declDiff: e.declDiff } : {}),
    ...(e.elicitation ? { elicitation: e.elicitation } : {}),
  };
}

/** `(2 steps · 3 tool calls, 1 failed · 1.2k tokens in, 56 out)` */
export function summary(r: TurnResult): string {
  const failed = r.calls.filter((c) => c.isError).length;
  const calls = `${r.calls.length} tool call${r.calls.length === 1 ? "" : "s"}${failed ? `, ${failed} failed` : ""}`;
  const tokens = `${formatCount(r.usage.inputTokens)} tokens in, ${formatCount(r.usage.outputTokens)} out`;
  return `(${r.steps} step${r.steps === 1 ? "" : "s"} · ${calls} · ${tokens})`;
}

function formatArgs(args: unknown): string {
  return shorten(printableValue(args), ARGS_WIDTH);
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KB`;
}

function formatCount(n: number): string {
  return n < 10_000 ? String(n) : `${(n / 1000).toFixed(1)}k`;
}
