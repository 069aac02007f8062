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
import { createPolicyReader } from "../tools/gate/policy.js";
import {
  type CallOrigin,
  type StoredRecord,
  type ToolRecord,
  writeRecord,
} from "../tools/records/records.js";
import { usageKey } from "../tools/records/usage.js";
import { isRunId } from "../tools/run-id.js";
import type { CallOptions, Runtime } from "../tools/runtime.js";
import type { ToolResult } from "../tools/types.js";
import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";
import { type Json, json, str } from "../tree/value.js";
import { AgentError } from "./errors.js";
import type { AgentEvent, ResumedCall, TurnResult } from "./events.js";
import { createLeases } from "./lease.js";
import type { ClientLlmSettings } from "./llm-config.js";
import type { ChatMessage, ChatResponse, Provider, ToolCall } from "./providers/types.js";
import { recordsOf, resumeAction, type Unanswered, unansweredCalls } from "./resume.js";
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
  /** Continues an interrupted run (`byteseek run --resume`, `POST /v1/agent/runs/<vid>/resume`). */
  resumeRun(input: ResumeInput): Promise<TurnResult>;
}

/** A resume: the run, and what a turn takes besides its input. */
export interface ResumeInput extends Omit<TurnInput, "input" | "vid"> {
  vid: string;
}

/** One turn's (or resume's) state while it runs. */
interface TurnState {
  vid: string;
  o: Omit<TurnInput, "input">;
  /** The user's message memory is recalled by. */
  input: string;
  signal: AbortSignal;
  emit: (e: AgentEvent) => void;
  log: Logger;
  messages: ChatMessage[];
  /** Tools tools.search answered this turn: sent in full from the next step on (deferred tool lists). */
  found: Set<string>;
  failingRounds: number;
  /** What the previous step asked: a step record keeps the prompt's parts only where they changed. */
  asked?: PromptDigest;
  result: TurnResult;
}

export function newVid(): string {
  return `r${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
}

export function createAgent(options: AgentOptions): Agent {
  const { tree, runtime, logger } = options;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const leases = createLeases(tree, logger);
  const readPolicy = createPolicyReader(tree);
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

  /** Adds tokens, turns and steps (model calls) to /byteseek/usage/<vid>, next to the runtime's call counters. */
  async function addTokens(
    vid: string,
    input: number,
    output: number,
    turns: number,
    steps: number,
  ): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const node = await tree.get(usageKey(vid));
      const base = node?.kind === "json" && isObject(node.value.value) ? node.value.value : {};
      const tokens = isObject(base.tokens) ? base.tokens : {};
      const next = {
        ...base,
        turns: num(base.turns) + turns,
        steps: num(base.steps) + steps,
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
    o: Omit<TurnInput, "input">,
    signal: AbortSignal,
    emit: (e: AgentEvent) => void,
    origin: CallOrigin,
    resume?: Pick<CallOptions, "retry" | "askRerun"> & { asked?: (approval: string) => void },
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
      ...(resume?.retry ? { retry: resume.retry } : {}),
      ...(resume?.askRerun ? { askRerun: resume.askRerun } : {}),
      onProgress: (p) => emit({ type: "tool_progress", id: call.id, name: call.name, ...p }),
      onApproval(p) {
        resume?.asked?.(p.key);
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

  /** Validates the run id, takes the run's lease, reads its messages and says it runs. */
  async function startTurn(o: Omit<TurnInput, "input" | "vid"> & { vid?: string }): Promise<TurnState> {
    const vid = o.vid ?? newVid();
    if (!isRunId(vid))
      throw new AgentError(
        "AGENT_INVALID_VID",
        `invalid vid ${JSON.stringify(vid)}: use letters, digits, _ . : @ -`,
      );
    const emit = (e: AgentEvent) => {
      try {
        o.onEvent?.(e);
      } catch (err) {
        logger.warn({ err, vid }, "an agent event listener threw");
      }
    };
    await leases.acquire(vid);
    try {
      const messages = await loadMessages(vid);
      return {
        vid,
        o,
        input: "",
        signal: o.signal ?? new AbortController().signal,
        emit,
        log: logger.child({ vid }),
        messages,
        found: new Set<string>(),
        failingRounds: 0,
        result: {
          vid,
          text: "",
          reason: "done",
          steps: 0,
          calls: [],
          records: [],
          usage: { inputTokens: 0, outputTokens: 0 },
        },
      };
    } catch (err) {
      await leases.release(vid);
      throw err;
    }
  }

  /**
   * Answers the calls of one assistant message in order, each result appended to the session;
   * `answer` says how a call is answered. Tells whether a tool ended the run.
   */
  async function answerCalls(
    s: TurnState,
    calls: readonly ToolCall[],
    answer: (call: ToolCall) => Promise<ToolResult>,
  ): Promise<{ failed: number; terminate: boolean }> {
    const { vid, emit, result, messages } = s;
    let failed = 0;
    let terminate = false;
    for (const call of calls) {
      let args: unknown = call.argsText;
      try {
        args = JSON.parse(call.argsText);
      } catch {
        // shown raw
      }
      emit({ type: "tool_start", id: call.id, name: call.name, args });
      const r = await answer(call);
      if (r.isError) failed++;
      if (r.terminate) terminate = true;
      if (call.name === SEARCH_TOOL && !r.isError) for (const n of foundNames(r.details)) s.found.add(n);
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
    return { failed, terminate };
  }

  /** After a round of calls: whether the run ends (a tool ended it, or repair is exhausted). */
  async function afterRound(
    s: TurnState,
    round: { failed: number; terminate: boolean },
    calls: number,
    text: string,
  ) {
    s.failingRounds = round.failed === calls ? s.failingRounds + 1 : 0;
    if (round.terminate) {
      s.result.reason = "terminated";
      s.result.text = text;
      return true;
    }
    if (s.failingRounds >= REPAIR_ROUNDS) {
      s.result.reason = "repair_exhausted";
      s.result.text = fillTemplate(await readPrompt(tree, "repair-exhausted"), {
        rounds: String(REPAIR_ROUNDS),
        vid: s.vid,
      });
      return true;
    }
    return false;
  }

  /** Steps until the model answers without tools or the run stops; a failure becomes the result's reason. */
  async function drive(s: TurnState): Promise<void> {
    const { vid, o, signal, emit, result, messages } = s;
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
        const prompt = await buildPrompt({
          tree,
          runtime,
          vid,
          input: s.input,
          found: s.found,
          date: new Date(at),
        });
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
          step: { ...stepRecord(digest, reply, at, s.asked), model: provider.model },
        });
        s.asked = digest;
        if (reply.toolCalls.length === 0) {
          result.text = reply.text;
          result.reason = "done";
          break;
        }
        // A reply cut off by the token limit: none of its calls run, each is told why.
        const truncated = reply.stopReason === "length";
        const truncatedText = truncated ? await readPrompt(tree, "truncated") : "";
        const round = await answerCalls(s, reply.toolCalls, (call) =>
          truncated
            ? recordSynthetic(vid, call, "truncated", "truncated", truncatedText, { message, id: call.id })
            : runCall(vid, call, o, signal, emit, { message, id: call.id }),
        );
        if (await afterRound(s, round, reply.toolCalls.length, reply.text)) break;
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
        s.log.error({ err }, "turn failed");
      }
    }
  }

  /** Stores how the turn ended (reason, status, its records, tokens), gives the lease back, says so. */
  async function endTurn(s: TurnState): Promise<TurnResult> {
    const { vid, result } = s;
    try {
      const ok = result.reason === "done" || result.reason === "terminated";
      // The reason first: whoever sees the status change can read why.
      await tree.set(reasonKey(vid), str(ok ? result.reason : `${result.reason}: ${result.text}`), { vid });
      await tree.set(statusKey(vid), str(ok ? "done" : "failed"), { vid });
      await tree.set(lastTurnKey(vid), json({ records: result.records, reason: result.reason }), { vid });
      await tree.del(pcKey(vid));
      await addTokens(vid, result.usage.inputTokens, result.usage.outputTokens, 1, result.steps);
    } finally {
      await leases.release(vid);
    }
    s.log.info({ reason: result.reason, steps: result.steps, calls: result.calls.length }, "turn ended");
    s.emit({ type: "turn_end", result });
    return result;
  }

  async function runTurn(o: TurnInput): Promise<TurnResult> {
    const s = await startTurn(o);
    s.input = o.input;
    try {
      await tree.set(statusKey(s.vid), str("running"), { vid: s.vid });
      s.emit({ type: "turn_start", vid: s.vid });
      await addMessage(s.vid, s.messages, { role: "user", content: o.input });
    } catch (err) {
      await leases.release(s.vid);
      throw err;
    }
    await drive(s);
    return endTurn(s);
  }

  /**
   * Continues a run whose process died (agent/resume.ts says what happens to each interrupted
   * call), then steps on as a turn does. Refused for a run that ended or that a live process holds.
   */
  async function resumeRun(o: ResumeInput): Promise<TurnResult> {
    const s = await startTurn(o);
    const { vid, messages, result } = s;
    let pending: Unanswered | undefined;
    try {
      const status = await tree.get(statusKey(vid));
      const state = status?.kind === "char/utf8" ? String(status.value.value) : undefined;
      if (messages.length === 0)
        throw new AgentError(
          "AGENT_RUN_NOT_FOUND",
          `run ${vid} has no messages: there is nothing to resume`,
          {
            vid,
          },
        );
      if (state === "done" || state === "failed")
        throw new AgentError(
          "AGENT_NOT_INTERRUPTED",
          `run ${vid} ended (${state}): there is nothing to resume; continue it with a new turn (byteseek run --vid ${vid} "…")`,
          { vid, status: state },
        );
      s.input = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
      await tree.set(statusKey(vid), str("running"), { vid });
      s.emit({ type: "turn_start", vid });
      pending = unansweredCalls(messages);
    } catch (err) {
      await leases.release(vid);
      throw err;
    }
    const last = messages.at(-1);
    if (last?.role === "assistant" && last.toolCalls.length === 0) {
      // the model had answered: only the end of the turn was lost
      result.text = last.text;
      return endTurn(s);
    }
    result.resumed = [];
    if (pending && pending.calls.length > 0) {
      const assistant = messages[pending.message];
      const found = await recordsOf(tree, vid, pending.message);
      const loaded = await readPolicy();
      const ctx = { tree, resumeUnknown: loaded.ok ? loaded.policy.resumeUnknown : ("report" as const) };
      const round = await answerCalls(s, pending.calls, async (call) => {
        const action = await resumeAction(call, found.get(call.id), ctx);
        const told: ResumedCall = { id: call.id, name: call.name, decision: action.decision };
        result.resumed?.push(told);
        if (action.do === "run")
          return runCall(
            vid,
            call,
            s.o,
            s.signal,
            s.emit,
            { message: pending!.message, id: call.id },
            {
              ...(action.retry ? { retry: action.retry } : {}),
              ...(action.ask
                ? {
                    askRerun: {
                      decided(approved) {
                        told.decision = approved ? "approved" : "declined";
                      },
                    },
                  }
                : {}),
              asked(approval) {
                told.approval = approval;
              },
            },
          );
        if (action.settle) await settleRecord(vid, action.key, found.get(call.id)?.record, action.result);
        return action.result;
      });
      const text = assistant?.role === "assistant" ? assistant.text : "";
      if (await afterRound(s, round, pending.calls.length, text)) return endTurn(s);
    }
    await drive(s);
    return endTurn(s);
  }

  /** A started record a resume answers without running the call: its result replaces it. */
  async function settleRecord(
    vid: string,
    key: string,
    started: StoredRecord | undefined,
    r: ToolResult,
  ): Promise<void> {
    const { record: _key, terminate: _t, ...rest } = r;
    await writeRecord(tree, logger, vid, { ...(started as ToolRecord), ...rest, state: "done", ms: 0 }, key);
  }

  return { runTurn, resumeRun };
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
