/**
 * 2026-07-28 hosts have no server-to-client requests: a question reaches them only as an
 * `input_required` result, and their answer comes back with the call made again. So a call whose
 * upstream asks during it is parked here: it keeps running in this process, the request that
 * started it answers `input_required` with the upstream's question, and the retried request
 * (carrying the signed state naming the parked call) hands the answer in and waits for what comes
 * next — the call's result, or its upstream's next question.
 *
 * Bounded: a question the host never answers ends with the approval's wait (policy
 * approvalTimeoutMs: the upstream hears `cancel`), a finished call nobody collects is dropped after
 * KEEP_DONE_MS, and at most MAX_PARKED calls are parked at once, MAX_PARKED_PER_SESSION of one
 * session (beyond, the call runs unparked: a question its upstream asks is not put to the host but
 * dismissed, the entry saying why), so one host cannot take every place and deny the other sessions.
 */
import { randomBytes } from "node:crypto";
import type { ElicitationAsked, HostAnswer, HostAsker, HostAskOptions } from "../tools/gate/asks.js";
import type { ToolResult } from "../tools/types.js";
import { type HostForm, hostForm } from "./host-elicit.js";

/** Calls parked at once, at most. */
export const MAX_PARKED = 64;
/** Calls of one session (MCP host) parked at once, at most. */
export const MAX_PARKED_PER_SESSION = 8;
/** A parked call that finished is kept this long for its host's retry, then dropped. */
export const KEEP_DONE_MS = 60_000;

/** What a request answers: the call's result, or the question to put to the host (and the parked call's id). */
export type ParkedStep = { result: ToolResult } | { ask: HostForm; park: string };

interface Question {
  form: HostForm;
  /** Put to the host already (in an input_required result). */
  sent: boolean;
  answer(a: HostAnswer): void;
}

interface Parked {
  id: string;
  /** The session (its run) whose host the call's questions go to. */
  session: string;
  /** The call's fingerprint (run, tool, arguments): only a request with it resumes the call. */
  call: string;
  result?: ToolResult;
  question?: Question;
  /** Wake the requests waiting for the next step. */
  waiting: Set<() => void>;
  /** Aborts the call: its host went away while waiting for it. */
  abort: AbortController;
  dropTimer?: NodeJS.Timeout;
}

export interface Parking {
  /**
   * Starts `run` with an asker whose questions wait for the host here, and answers its first step.
   * `signal` is the starting request's: aborted while it waits, the call is aborted. `session`
   * names the host's session (its run) for the per-session cap.
   */
  start(
    session: string,
    call: string,
    tool: string,
    who: { by: string; via: string },
    run: (askHost: HostAsker, signal: AbortSignal) => Promise<ToolResult>,
    signal: AbortSignal,
  ): Promise<ParkedStep>;
  /**
   * Hands the host's answer to the parked call `park` (only when `call` is its fingerprint) and
   * answers its next step; undefined when no such call is parked (finished and collected, dropped,
   * or another call's).
   */
  resume(
    park: string,
    call: string,
    answer: HostAnswer,
    signal: AbortSignal,
  ): Promise<ParkedStep | undefined>;
}

export function createParking(): Parking {
  const parked = new Map<string, Parked>();
  /** How many calls each session has parked. */
  const ofSession = new Map<string, number>();

  function wake(p: Parked) {
    const waiting = [...p.waiting];
    p.waiting.clear();
    for (const w of waiting) w();
  }

  function drop(p: Parked) {
    clearTimeout(p.dropTimer);
    if (!parked.delete(p.id)) return;
    const n = (ofSession.get(p.session) ?? 1) - 1;
    if (n > 0) ofSession.set(p.session, n);
    else ofSession.delete(p.session);
  }

  /** Why a call of `session` cannot be parked now, or undefined when it can. */
  function full(session: string): string | undefined {
    if ((ofSession.get(session) ?? 0) >= MAX_PARKED_PER_SESSION)
      return `this MCP session already has ${MAX_PARKED_PER_SESSION} calls that may wait for its answers (the most one session may have); answer their questions or let them finish, then call again`;
    if (parked.size >= MAX_PARKED)
      return `${MAX_PARKED} calls already wait for their MCP hosts' answers; call again once some have finished`;
    return undefined;
  }

  /** Waits for the parked call's next step: its result, or a question not yet put to the host. */
  async function next(p: Parked, signal: AbortSignal): Promise<ParkedStep> {
    const onAbort = () => p.abort.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        if (p.result !== undefined) {
          drop(p);
          return { result: p.result };
        }
        if (p.question && !p.question.sent) {
          p.question.sent = true;
          return { ask: p.question.form, park: p.id };
        }
        await new Promise<void>((wake) => p.waiting.add(wake));
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  function askerOf(p: Parked, tool: string, who: { by: string; via: string }): HostAsker {
    return {
      ...who,
      ask(question: ElicitationAsked, options: HostAskOptions): Promise<HostAnswer> {
        const form = hostForm(question, tool, options.refused);
        if (p.question) return Promise.reject(new Error("the host answers one question of a call at a time"));
        return new Promise<HostAnswer>((resolve, reject) => {
          const onAbort = () => {
            if (p.question === q) delete p.question;
            reject(new Error("the question ended before the host answered"));
          };
          const q: Question = {
            form,
            sent: false,
            answer(a) {
              options.signal.removeEventListener("abort", onAbort);
              resolve(a);
            },
          };
          if (options.signal.aborted) return onAbort();
          options.signal.addEventListener("abort", onAbort, { once: true });
          p.question = q;
          wake(p);
        });
      },
    };
  }

  return {
    async start(session, call, tool, who, run, signal) {
      const p: Parked = {
        id: randomBytes(16).toString("base64url"),
        session,
        call,
        abort: new AbortController(),
        waiting: new Set(),
      };
      const refused = full(session);
      if (refused === undefined) {
        parked.set(p.id, p);
        ofSession.set(session, (ofSession.get(session) ?? 0) + 1);
      }
      const refuse: HostAsker = { ...who, ask: () => Promise.reject(new Error(refused)) };
      const finish = (result: ToolResult) => {
        p.result = result;
        wake(p);
        // kept for the host's retry a while: nobody collecting it, it goes (and frees its place)
        if (parked.has(p.id)) p.dropTimer = setTimeout(() => drop(p), KEEP_DONE_MS).unref();
      };
      void run(refused === undefined ? askerOf(p, tool, who) : refuse, p.abort.signal).then(
        finish,
        // a call never throws (the boundary answers every failure); kept safe all the same
        (err: unknown) =>
          finish({
            kind: "runtime",
            isError: true,
            text: `the call failed inside byteseek: ${(err as Error)?.message ?? String(err)}`,
            details: {},
          }),
      );
      return next(p, signal);
    },

    async resume(park, call, answer, signal) {
      const p = parked.get(park);
      if (!p || p.call !== call) return undefined;
      const q = p.question;
      if (q?.sent) {
        delete p.question;
        q.answer(answer);
      }
      return next(p, signal);
    },
  };
}
