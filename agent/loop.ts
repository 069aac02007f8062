/**
 * The turn loop (after pi's agent loop): rebuild the prompt from the tree, call the model, run the
 * tool calls it asked for through the one call boundary, feed the results back, and go on until
 * the model answers without tools, a tool ends the run, the step budget runs out, or repair is
 * exhausted. A turn is `startTurn` → `drive` (steps: agent/turn-step.ts) → `endTurn`; a resume
 * answers the interrupted round first (agent/resume-round.ts). Everything a turn does lands in the
 * tree, a step's state in one commit (agent/run-commit.ts):
 *
 *   /byteseek/session/<vid>/<n>   the messages (user, assistant, tool results)
 *   /byteseek/tool/<vid>/<n>      one record per call (written by the runtime, and by the loop for
 *                                 calls that never reach it: truncated or unparsable)
 *   /byteseek/usage/<vid>         tokens, turns and steps, beside the runtime's call counters
 *   /vthread/<vid>/status, /vthread/<vid>/reason, /vthread/<vid>/turn
 */
import { lastTurnKey } from "../prompts/build.js";
import { parseDocValue } from "../tools/doc/read-write.js";
import { SessionMessageDoc } from "../tools/doc/session-message.js";
import { createPolicyReader } from "../tools/gate/policy.js";
import { isRunId, newVid } from "../tools/run-id.js";
import { isTreeError } from "../tree/errors.js";
import { json, str } from "../tree/value.js";
import { AgentError } from "./errors.js";
import type { AgentEvent, TurnResult } from "./events.js";
import { createLeases } from "./lease.js";
import type { ChatMessage } from "./providers/types.js";
import { unansweredCalls } from "./resume.js";
import { resumeRound } from "./resume-round.js";
import { commitRun } from "./run-commit.js";
import { reasonKey, sessionDir, statusKey } from "./run-keys.js";
import type { TurnDeps, TurnInput, TurnState } from "./turn-state.js";
import { drive } from "./turn-step.js";

export const DEFAULT_MAX_STEPS = 32;

export interface AgentOptions extends Omit<TurnDeps, "maxSteps" | "clock"> {
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

export function createAgent(options: AgentOptions): Agent {
  const { tree, logger } = options;
  const d: TurnDeps = {
    ...options,
    maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
    clock: options.clock ?? Date.now,
  };
  const leases = createLeases(tree, logger);
  const readPolicy = createPolicyReader(tree);

  /** The run's messages, parsed (a damaged one is DOC_MALFORMED, naming its key). */
  async function loadMessages(vid: string): Promise<ChatMessage[]> {
    const out: ChatMessage[] = [];
    const dir = sessionDir(vid);
    let after: string | undefined;
    try {
      do {
        const page = await tree.list(dir, { limit: 1000, ...(after ? { after } : {}) });
        for (const c of page.children)
          if (c.kind !== "index")
            out.push(parseDocValue(SessionMessageDoc, `${dir}${c.name}`, c.value, c.kind));
        after = page.next;
      } while (after);
    } catch (err) {
      if (!isTreeError(err, "TREE_NOT_FOUND")) throw err;
    }
    return out;
  }

  /** Validates the run id, takes the run's lease and reads its messages. */
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
        unsaved: [],
        counted: { steps: 0, input: 0, output: 0 },
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
   * Stores how the turn ended in one commit (the results not stored yet, reason, status, the
   * turn's records, the rest of its usage), gives the lease back, says so.
   */
  async function endTurn(s: TurnState): Promise<TurnResult> {
    const { vid, result } = s;
    try {
      const ok = result.reason === "done" || result.reason === "terminated";
      await commitRun(tree, vid, {
        messages: s.unsaved,
        // the reason before the status: whoever sees the status change can read why
        sets: [
          [reasonKey(vid), str(ok ? result.reason : `${result.reason}: ${result.text}`)],
          [statusKey(vid), str(ok ? "done" : "failed")],
          [lastTurnKey(vid), json({ records: result.records, reason: result.reason })],
        ],
        usage: {
          turns: 1,
          steps: result.steps - s.counted.steps,
          input: result.usage.inputTokens - s.counted.input,
          output: result.usage.outputTokens - s.counted.output,
        },
      });
      s.unsaved = [];
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
      const user: ChatMessage = { role: "user", content: o.input };
      await commitRun(tree, s.vid, { messages: [user], sets: [[statusKey(s.vid), str("running")]] });
      s.messages.push(user);
      s.emit({ type: "turn_start", vid: s.vid });
    } catch (err) {
      await leases.release(s.vid);
      throw err;
    }
    await drive(d, s);
    return endTurn(s);
  }

  /** Refuses a resume of a run that has no messages or that ended; says it runs again. */
  async function checkResumable(s: TurnState): Promise<void> {
    const { vid, messages } = s;
    const status = await tree.get(statusKey(vid));
    const state = status?.kind === "char/utf8" ? String(status.value.value) : undefined;
    if (messages.length === 0)
      throw new AgentError("AGENT_RUN_NOT_FOUND", `run ${vid} has no messages: there is nothing to resume`, {
        vid,
      });
    if (state === "done" || state === "failed")
      throw new AgentError(
        "AGENT_NOT_INTERRUPTED",
        `run ${vid} ended (${state}): there is nothing to resume; continue it with a new turn (byteseek run --vid ${vid} "…")`,
        { vid, status: state },
      );
    s.input = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
    await tree.set(statusKey(vid), str("running"), { vid });
    s.emit({ type: "turn_start", vid });
  }

  /**
   * Continues a run whose process died (agent/resume.ts says what happens to each interrupted
   * call), then steps on as a turn does. Refused for a run that ended or that a live process holds.
   */
  async function resumeRun(o: ResumeInput): Promise<TurnResult> {
    const s = await startTurn(o);
    try {
      await checkResumable(s);
    } catch (err) {
      await leases.release(s.vid);
      throw err;
    }
    const last = s.messages.at(-1);
    if (last?.role === "assistant" && last.toolCalls.length === 0) {
      // the model had answered: only the end of the turn was lost
      s.result.text = last.text;
      return endTurn(s);
    }
    s.result.resumed = [];
    const pending = unansweredCalls(s.messages);
    if (pending && pending.calls.length > 0) {
      const loaded = await readPolicy();
      const unknown = loaded.ok ? loaded.policy.resumeUnknown : "report";
      if (await resumeRound(d, s, pending, unknown)) return endTurn(s);
    }
    await drive(d, s);
    return endTurn(s);
  }

  return { runTurn, resumeRun };
}
