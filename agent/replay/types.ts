/**
 * What a replay reports, and where two runs part: shared by `byteseek run --replay`, `kvspace runs
 * diff` and `GET /v1/agent/runs/<a>/diff/<b>`. Types only (the HTTP schema is in
 * server/runtime-schemas.ts).
 */
import type { TurnResult } from "../events.js";

/** What differs first: what the model was asked, what it answered, a call it made, or a call's result. */
export type DivergenceKind = "prompt" | "answer" | "call" | "result" | "end";

/** The first point where a run parts from its record (replay) or from another run (diff). */
export interface Divergence {
  kind: DivergenceKind;
  /** 1-based step over the whole run (each model answer is a step). */
  step: number;
  /** 1-based turn, and the step within it. */
  turn: number;
  turnStep: number;
  /** 1-based call within the step, for a call or result. */
  call?: number;
  tool?: string;
  /** The record of that call, when there is one. */
  record?: string;
  /** One sentence: what differed. */
  summary: string;
  /** A few lines showing it: a unified diff of two texts, or the two values. */
  diff: string[];
}

/** Something a replay noticed that does not stop it: the world changed since the run. */
export interface ReplayNote {
  kind: "prompt" | "declaration" | "unrecorded";
  /** The first step it concerns. */
  step?: number;
  text: string;
  diff?: string[];
}

export interface ReplayReport {
  vid: string;
  /** Tools ran again (`--live-tools`), or answered from their records. */
  live: boolean;
  turns: number;
  steps: number;
  calls: number;
  /** Tool calls that executed (0 unless live). */
  executed: number;
  /** Requests sent to a model: always 0 (every answer comes from the record). */
  modelRequests: 0;
  notes: ReplayNote[];
  /** Absent when the replay matched the record step for step. */
  divergence?: Divergence;
  /** Each replayed turn's result, as the loop answered it. */
  results: TurnResult[];
}
