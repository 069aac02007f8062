/**
 * What the recorded model and the recorded tools share while one run replays: where in the record
 * the loop is, what was noticed, and the first divergence (which stops the loop: its signal aborts).
 */

import type { RecordedCall, RecordedStep, RunTranscript } from "./transcript.js";
import type { Divergence, ReplayNote } from "./types.js";

/** A record's place in the run: the call it answered, in which step. */
export interface PairedRecord {
  step: RecordedStep;
  call: RecordedCall;
  /** 1-based within the step. */
  callIndex: number;
}

export interface ReplayState {
  readonly transcript: RunTranscript;
  /** Every step of the run, in order. */
  readonly steps: readonly RecordedStep[];
  /** The n-th record of the run, as the transcript paired it. */
  readonly byRecord: readonly PairedRecord[];
  /** The turn the loop is replaying (0-based). */
  turn: number;
  /** The next recorded answer the model gives. */
  cursor: number;
  /** Session messages already compared with what the loop sent. */
  compared: number;
  executed: number;
  /** The run's records no call answers, copied into the scratch tree before the loop starts. */
  unpaired: number;
  readonly notes: ReplayNote[];
  divergence?: Divergence;
  readonly signal: AbortSignal;
  /** Keeps the first divergence and stops the loop. */
  diverge(d: Divergence): void;
  /** The step the model answered last (the one whose calls run now). */
  current(): RecordedStep | undefined;
}

export function createReplayState(transcript: RunTranscript): ReplayState {
  const controller = new AbortController();
  const steps = transcript.turns.flatMap((t) => t.steps);
  const byRecord: PairedRecord[] = [];
  for (const step of steps)
    for (const [i, call] of step.calls.entries())
      if (call.record) byRecord.push({ step, call, callIndex: i + 1 });
  const state: ReplayState = {
    transcript,
    steps,
    byRecord,
    turn: 0,
    cursor: 0,
    compared: 0,
    executed: 0,
    unpaired: 0,
    notes: [],
    signal: controller.signal,
    diverge(d) {
      if (state.divergence) return;
      state.divergence = d;
      controller.abort();
    },
    current: () => steps[state.cursor - 1],
  };
  return state;
}

/** Where a divergence is, for a step and (optionally) a call of it. */
export function at(step: RecordedStep, call?: { index: number; name: string; record?: string }) {
  return {
    step: step.index,
    turn: step.turn + 1,
    turnStep: step.turnStep,
    ...(call ? { call: call.index, tool: call.name, ...(call.record ? { record: call.record } : {}) } : {}),
  };
}
