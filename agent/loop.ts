/**
 * The turn loop (after pi's agent loop): rebuild the prompt from the tree, call the model, run the
 * tool calls it asked for through the one call boundary, feed the results back, and go on until
 * the model answers without tools, a tool ends the run, the step budget runs out, or repair is
 * exhausted. Everything a turn does lands in the tree:
 *
 *   /byteseek/session/<vid>/<n>   the messages (user, assistant, tool results)
 *   /byteseek/tool/<vid>/<n>      one record per call (written by the runtime, and here for
 *                                 calls that never reach it: truncated or unparsable)
 *   /byteseek/usage/<vid>         tokens and calls
 *   /vthread/<vid>/status, /vthread/<vid>/‥pc, /vthread/<vid>/turn
 */
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { buildPrompt, lastTurnKey } from "../prompts/build.js";
import { fillTemplate, readPrompt } from "../prompts/defaults.js";
import { SEARCH_TOOL } from "../prompts/tool-list.js";
import type { ToolKind } from "../tools/errors.js";
import { type CallOrigin, writeRecord } from "../tools/records.js";
import { isRunId } from "../tools/run-id.js";
import type { Runtime } from "../tools/runtime.js";
import type { ToolResult } from "../tools/types.js";
import { usageKey } from "../tools/usage.js";
import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";
import { type Json, json, str } from "../tree/value.js";
import { AgentError } from "./errors.js";
import type { AgentEvent, TurnResult } from "./events.js";
import type { ClientLlmSettings } from "./llm-config.js";
import type { ChatMessage, ChatResponse, Provider, ToolCall } from "./providers/types.js";
import { digestPrompt, type PromptDigest, stepRecord } from "./step-record.js";

/** Rounds in a row in which every call failed before the run stops. */
export const REPAIR_ROUNDS = 3;
export const DEFAULT_MAX_STEPS = 32;

export const sessionDir = (vid: string): string => `/byteseek/session/${vid}/`;
export const statusKey = (vid: string): string => `/vthread/${vid}/status`;
export const reasonKey = (vid: string): string => `/vthread/${vid}/reason`;
export const pcKey = (vid: string): string => `/vthread/${vid}/‥pc`;

export interface TurnInput {
  vid?: string;
  input: string;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /** Approve calls of tools that need confirmation. */
  approve?: boolean;
  /** Who approves them, and the credential they came with (CallOptions.approvedBy/Via): kept in the approvals. */
  approvedBy?: string;
  approvedVia?: string;
  /** Model settings the person's client sent; they win over the server's (see `resolveLlmConfig`). */
  llm?: ClientLlmSettings;
}

export interface AgentOptions {
  tree: Tree;
  runtime: Runtime;
  /**
   * The model; a function so configuration edited in the tree applies on the next turn. Given the
   * turn's client settings, when it has some.
   */
  provider: (client?: ClientLlmSettings) => Promise<Provider>;
  logger: Logger;
  maxSteps?: number;
  /** The time a step's prompt is built for (its `{{date}}`), in ms since the epoch; a replay gives the recorded one. */
  clock?: () => number;
}

export interface Agent {
  runTurn(input: TurnInput): Promise<TurnResult>;
}

export function newVid(): string {
  return `r${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
}

export function createAgent(options: AgentOptions): Agent {
  const { tree, runtime, logger } = options;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const clock = options.clock ?? Date.now;

  async function loadMessages(vid: string): Promise<ChatMessage[]> {
    const out: ChatMessage[] = [];
    let after: string | undefined;
    try {
      do {
        const page = await tree.list(sessionDir(vid), { limit: 1000, ...(after ? { after } : {}) });
        for (const c of page.children)
          if (c.kind === "json" && c.value) out.push(c.value.value as unknown as ChatMessage);
        after = page.next;
      } while (after);
    } catch (err) {
      if (!isTreeError(err, "TREE_NOT_FOUND")) throw err;
    }
    return out;
  }

  /** Appends a message to the session; answers its number (`/byteseek/session/<vid>/<n>`). */
  async function addMessage(vid: string, messages: ChatMessage[], m: ChatMessage): Promise<number> {
    messages.push(m);
    const { key } = await tree.append(sessionDir(vid), json(m as unknown as Json), { vid });
    return Number(key.slice(key.lastIndexOf("/") + 1));
  }

  /** Adds tokens (and turns) to /byteseek/usage/<vid>, next to the runtime's call counters. */
  async function addTokens(vid: string, input: number, output: number, turns: number): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const node = await tree.get(usageKey(vid));
      const base = node?.kind === "json" && isObject(node.value.value) ? node.value.value : {};
      const tokens = isObject(base.tokens) ? base.tokens : {};
      const next = {
        ...base,
        turns: num(base.turns) + turns,
        tokens: { input: num(tokens.input) + input, output: num(tokens.output) + output },
      };
      try {
        await tree.set(usageKey(vid), json(next), {
          ifVersion: node && node.kind !== "index" ? node.version : 0,
          ro: true,
          force: true,
        });
        return;
      } catch (err) {
        if (!isTreeError(err, "TREE_VERSION_MISMATCH")) throw err;
      }
    }
  }

  /** Records a call that never reached the runtime (truncated reply, unparsable arguments). */
  async function recordSynthetic(
    vid: string,
    call: ToolCall,
    kind: ToolKind,
    code: string,
    text: string,
    origin: CallOrigin,
  ): Promise<ToolResult> {
    const ts = Date.now();
    const details = { code, argsText: call.argsText.slice(0, 2000) };
    const record = await writeRecord(tree, logger, vid, {
      name: call.name,
      args: { "‥raw": call.argsText.slice(0, 2000) },
      kind,
      isError: true,
      text,
      details,
      ts,
      ms: 0,
      state: "done",
      origin,
    });
    return { kind, isError: true, text, details, ...(record ? { record } : {}) };
  }

  async function runCall(
    vid: string,
    call: ToolCall,
    o: TurnInput,
    signal: AbortSignal,
    emit: (e: AgentEvent) => void,
    origin: CallOrigin,
    retry?: string,
  ): Promise<ToolResult> {
    let args: unknown;
    try {
      args = call.argsText.trim() === "" ? {} : JSON.parse(call.argsText);
    } catch {
      return recordSynthetic(vid, call, "vet", "invalid_json", await readPrompt(tree, "bad-json"), origin);
    }
    await tree.set(pcKey(vid), json({ id: call.id, name: call.name, started: Date.now() }), { vid });
    // While a person decides, the run's status says it waits (and for which approval).
    let waited: Promise<unknown> | undefined;
    const result = await runtime.call(call.name, args, {
      vid,
      signal,
      ...(o.approve ? { approve: true } : {}),
      ...(o.approve && o.approvedBy ? { approvedBy: o.approvedBy, approvedVia: o.approvedVia } : {}),
      waitForApproval: true,
      origin,
      ...(retry ? { retry } : {}),
      onApproval(p) {
        // the event goes out once the status says so: whoever hears it reads the same state
        waited = tree
          .set(statusKey(vid), str(`waiting ${p.key}`), { vid })
          .catch(() => undefined)
          .then(() => emit({ type: "approval_pending", id: call.id, name: call.name, ...p }));
      },
    });
    if (waited) {
      await waited;
      await tree.set(statusKey(vid), str("running"), { vid });
    }
    if (result.record) await tree.set(pcKey(vid), str(result.record), { vid });
    return result;
  }

  async function runTurn(o: TurnInput): Promise<TurnResult> {
    const vid = o.vid ?? newVid();
    if (!isRunId(vid))
      throw new AgentError(
        "AGENT_INVALID_VID",
        `invalid vid ${JSON.stringify(vid)}: use letters, digits, _ . : @ -`,
      );
    const signal = o.signal ?? new AbortController().signal;
    const emit = (e: AgentEvent) => {
      try {
        o.onEvent?.(e);
      } catch (err) {
        logger.warn({ err, vid }, "an agent event listener threw");
      }
    };
    const log = logger.child({ vid });
    const result: TurnResult = {
      vid,
      text: "",
      reason: "done",
      steps: 0,
      calls: [],
      records: [],
      usage: { inputTokens: 0, outputTokens: 0 },
    };
    const messages = await loadMessages(vid);
    await tree.set(statusKey(vid), str("running"), { vid });
    emit({ type: "turn_start", vid });
    await addMessage(vid, messages, { role: "user", content: o.input });
    let failingRounds = 0;
    // tools tools.search answered this turn: sent in full from the next step on (deferred tool lists)
    const found = new Set<string>();
    // what the previous step asked: a step record keeps the prompt's parts only where they changed
    let asked: PromptDigest | undefined;
    try {
      for (;;) {
        if (signal.aborted) {
          result.reason = "aborted";
          result.text = "the turn was aborted";
          break;
        }
        if (result.steps >= maxSteps) {
          result.reason = "max_steps";
          result.text = `the turn stopped after ${maxSteps} steps without a final answer`;
          break;
        }
        result.steps++;
        emit({ type: "step", step: result.steps });
        const at = clock();
        const prompt = await buildPrompt({ tree, runtime, vid, input: o.input, found, date: new Date(at) });
        const digest = digestPrompt(prompt.system, prompt.tools);
        const provider = await options.provider(o.llm);
        const reply: ChatResponse = await provider.complete(
          { system: prompt.system, messages, tools: prompt.tools },
          { signal, onEvent: (e) => e.type !== "done" && emit(e) },
        );
        result.usage.inputTokens += reply.usage.inputTokens;
        result.usage.outputTokens += reply.usage.outputTokens;
        const message = await addMessage(vid, messages, {
          role: "assistant",
          text: reply.text,
          toolCalls: reply.toolCalls,
          step: stepRecord(digest, reply, at, asked),
        });
        asked = digest;
        if (reply.toolCalls.length === 0) {
          result.text = reply.text;
          result.reason = "done";
          break;
        }
        // A reply cut off by the token limit: none of its calls run, each is told why.
        const truncated = reply.stopReason === "length";
        const truncatedText = truncated ? await readPrompt(tree, "truncated") : "";
        let failed = 0;
        let terminate = false;
        for (const call of reply.toolCalls) {
          let args: unknown = call.argsText;
          try {
            args = JSON.parse(call.argsText);
          } catch {
            // shown raw
          }
          emit({ type: "tool_start", id: call.id, name: call.name, args });
          const r = truncated
            ? await recordSynthetic(vid, call, "truncated", "truncated", truncatedText, {
                message,
                id: call.id,
              })
            : await runCall(vid, call, o, signal, emit, { message, id: call.id });
          if (r.isError) failed++;
          if (r.terminate) terminate = true;
          if (call.name === SEARCH_TOOL && !r.isError) for (const n of foundNames(r.details)) found.add(n);
          result.calls.push({
            name: call.name,
            kind: r.kind,
            isError: r.isError,
            ...(r.record ? { record: r.record } : {}),
          });
          if (r.record) result.records.push(r.record);
          emit({
            type: "tool_result",
            id: call.id,
            name: call.name,
            kind: r.kind,
            isError: r.isError,
            text: r.text,
            ...(r.record ? { record: r.record } : {}),
          });
          await addMessage(vid, messages, {
            role: "tool",
            toolCallId: call.id,
            name: call.name,
            content: r.text,
            isError: r.isError,
          });
        }
        failingRounds = failed === reply.toolCalls.length ? failingRounds + 1 : 0;
        if (terminate) {
          result.reason = "terminated";
          result.text = reply.text;
          break;
        }
        if (failingRounds >= REPAIR_ROUNDS) {
          result.reason = "repair_exhausted";
          result.text = fillTemplate(await readPrompt(tree, "repair-exhausted"), {
            rounds: String(REPAIR_ROUNDS),
            vid,
          });
          break;
        }
      }
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (signal.aborted || e.code === "LLM_ABORTED") {
        result.reason = "aborted";
        result.text = "the turn was aborted";
      } else {
        result.reason = "model_error";
        result.text = e.message ?? String(err);
        result.error = { code: e.code ?? "AGENT_FAILED", message: result.text };
        log.error({ err }, "turn failed");
      }
    }
    const ok = result.reason === "done" || result.reason === "terminated";
    // The reason first: whoever sees the status change can read why.
    await tree.set(reasonKey(vid), str(ok ? result.reason : `${result.reason}: ${result.text}`), { vid });
    await tree.set(statusKey(vid), str(ok ? "done" : "failed"), { vid });
    await tree.set(lastTurnKey(vid), json({ records: result.records, reason: result.reason }), { vid });
    await tree.del(pcKey(vid));
    await addTokens(vid, result.usage.inputTokens, result.usage.outputTokens, 1);
    log.info({ reason: result.reason, steps: result.steps, calls: result.calls.length }, "turn ended");
    emit({ type: "turn_end", result });
    return result;
  }

  return { runTurn };
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** The tool names a tools.search result answered (its details.names). */
function foundNames(details: Record<string, unknown>): string[] {
  const names = details.names;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === "string") : [];
}
