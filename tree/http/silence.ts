/**
 * How long the HTTP tree waits on a server that took the connection but says nothing: a bound on
 * silence, not on the whole request, so a long export or import that keeps moving is never cut,
 * while a server that accepts and never answers (stuck, or a port taken by something else) is.
 * Both transports answer an aborted signal alike, so the bound lives here, above them.
 */
import { TreeError } from "../errors.js";

/** The client's bound when nothing sets one, ms (BYTESEEK_CLIENT_TIMEOUT). */
export const DEFAULT_CLIENT_TIMEOUT_MS = 30_000;

/** The setting that names the bound, for the messages that say how to change it. */
export const CLIENT_TIMEOUT_SETTING = "BYTESEEK_CLIENT_TIMEOUT";

/** One request's bound on silence. */
export interface SilenceBound {
  /** Aborted when the bound passes, or when the signal it was made with aborts. */
  readonly signal: AbortSignal;
  /** Whether the bound passed (as opposed to the caller's own abort). */
  expired(): boolean;
  /** A sign of life (the answer's head, a piece of its body, a piece sent): the wait starts again (also after `pause`). */
  touch(): void;
  /**
   * The wait is on this side now (the reader still busy with a piece, a body's source not ready
   * with the next): no silence counts until the next `touch`.
   */
  pause(): void;
  /** From now on the bound is `ms` (0: none), counted from now: a watch's stream, once open, waits for its heartbeat. */
  limit(ms: number): void;
  /** The request is over: no more waiting. */
  stop(): void;
}

/** A bound of `ms` (0: none) on silence, also aborted with `outer`. */
export function boundSilence(ms: number, outer?: AbortSignal): SilenceBound {
  const ac = new AbortController();
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  let current = ms;
  let paused = false;
  let stopped = false;
  const onOuter = () => ac.abort(outer?.reason);
  if (outer?.aborted) ac.abort(outer.reason);
  else outer?.addEventListener("abort", onOuter, { once: true });
  function arm(bound: number): void {
    clearTimeout(timer);
    timer = undefined;
    current = bound;
    paused = false;
    if (bound <= 0 || ac.signal.aborted || stopped) return;
    // setTimeout takes at most 2^31-1 ms (a longer one fires at once)
    timer = setTimeout(
      () => {
        expired = true;
        ac.abort(new Error(`no answer within ${bound} ms`));
      },
      Math.min(bound, 2 ** 31 - 1),
    );
    // The request's socket keeps the process alive while it waits; the timer alone never should.
    timer.unref();
  }
  arm(ms);
  return {
    signal: ac.signal,
    expired: () => expired,
    touch() {
      if (expired || stopped) return;
      if (paused) arm(current);
      else timer?.refresh();
    },
    pause() {
      clearTimeout(timer);
      timer = undefined;
      paused = true;
    },
    limit: arm,
    stop() {
      clearTimeout(timer);
      timer = undefined;
      stopped = true;
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

/**
 * Reads `BYTESEEK_CLIENT_TIMEOUT` (milliseconds; `0`: no bound; unset: 30 s). A malformed value is
 * refused with TREE_INVALID_OPTION, naming what it takes.
 */
export function readClientTimeout(env: NodeJS.ProcessEnv): number {
  const text = env[CLIENT_TIMEOUT_SETTING]?.trim();
  if (text === undefined || text === "") return DEFAULT_CLIENT_TIMEOUT_MS;
  if (!/^[0-9]{1,9}$/.test(text))
    throw new TreeError(
      "TREE_INVALID_OPTION",
      `${CLIENT_TIMEOUT_SETTING} must be a number of milliseconds (e.g. 30000; 0 for no bound), got ${JSON.stringify(env[CLIENT_TIMEOUT_SETTING])}`,
      { setting: CLIENT_TIMEOUT_SETTING },
    );
  return Number(text);
}
