/**
 * Replays a finished run with the real turn loop: the model is a provider answering from the
 * run's record (recorded-provider.ts) and the tools a runtime answering from its call records
 * (recorded-runtime.ts) — or, live, running each call again through the usual gate and stopping at
 * the first result that differs. The loop runs on a tree whose run-owned keys are a scratch
 * memory tree (scratch-tree.ts), so the replay has the run's own id, prompts and record keys and
 * leaves what the run recorded as it was. Each recorded turn is driven with its recorded input.
 */
import type { Logger } from "pino";
import type { Runtime } from "../../tools/runtime.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { AgentError } from "../errors.js";
import type { AgentEvent, TurnResult } from "../events.js";
import { createAgent, DEFAULT_MAX_STEPS } from "../loop.js";
import { createRecordedProvider } from "./recorded-provider.js";
import { copyUnpaired, createRecordedRuntime } from "./recorded-runtime.js";
import { createScratchStore } from "./scratch-store.js";
import { createScratchTree, runOwns } from "./scratch-tree.js";
import { at, createReplayState, type ReplayState } from "./state.js";
import { type RecordedTurn, type RunTranscript, readTranscript, recordedEnd } from "./transcript.js";
import type { ReplayReport } from "./types.js";

/** A run is replayed once it ended: its status says so. */
const FINISHED = new Set(["done", "failed"]);

/** What runs the tools again in a live replay: a runtime over the tree handed in (the replay's). */
export type LiveRuntime = (tree: Tree) => Promise<{ runtime: Runtime; close(): Promise<void> }>;

export interface ReplayOptions {
  /** The tree the run is recorded in (read only, unless tools run again). */
  tree: Tree;
  /** Builds the prompts (its catalogue); a recorded replay never calls it. */
  runtime: Runtime;
  logger: Logger;
  vid: string;
  /** Run the tools again, through this runtime, against the current workspace. */
  live?: LiveRuntime;
  /** As the loop's, for the turn being replayed (0-based). */
  onEvent?: (e: AgentEvent, turn: number) => void;
  /** Told before each turn starts, with its recorded input. */
  onTurn?: (turn: number, input: string) => void;
  /** The loop's step budget, as the run had it (default the loop's). */
  maxSteps?: number;
  /** Read already (a bench replays one run many times). */
  transcript?: RunTranscript;
  /** Given the replay's own run (the scratch tree of its keys) once it ended, before it is dropped. */
  keep?: (scratch: Tree) => Promise<void>;
}

export async function replayRun(options: ReplayOptions): Promise<ReplayReport> {
  const { tree, logger, vid } = options;
  const transcript = options.transcript ?? (await readTranscript(tree, vid));
  if (!FINISHED.has(transcript.status ?? ""))
    throw new AgentError(
      "AGENT_RUN_NOT_FINISHED",
      `run ${vid} has not finished (status ${transcript.status ?? "unknown"}): only a done or failed run replays`,
      { vid, status: transcript.status ?? null },
    );
  const state = createReplayState(transcript);
  // a replay that runs no tool and keeps nothing writes only what its own loop reads back: the
  // scratch store holds it as objects; else a memory tree (no history, a short change log: nobody
  // reads the past of a scratch tree, or watches it), where tools and the saved run's export work
  const scratch =
    options.live || options.keep
      ? await openTree({ backend: "memory", historyLimit: 0, retainRevisions: 1 })
      : createScratchStore(runOwns(vid));
  const replayTree = createScratchTree({ real: tree, scratch, vid, realWrites: options.live !== undefined });
  let live: Awaited<ReturnType<LiveRuntime>> | undefined;
  const results: TurnResult[] = [];
  try {
    await copyUnpaired(state, scratch);
    live = options.live ? await options.live(replayTree) : undefined;
    const runtime = createRecordedRuntime({
      state,
      tree,
      scratch,
      base: live?.runtime ?? options.runtime,
      live: live !== undefined,
    });
    const provider = createRecordedProvider(state);
    for (const [index, turn] of transcript.turns.entries()) {
      state.turn = index;
      options.onTurn?.(index, turn.input);
      const agent = createAgent({
        tree: replayTree,
        runtime,
        logger,
        provider: async () => provider,
        maxSteps: stepBudget(transcript, turn, index, options.maxSteps ?? DEFAULT_MAX_STEPS),
        clock: () => state.steps[state.cursor]?.answer.step?.at ?? Date.now(),
      });
      const result = await agent.runTurn({
        vid,
        input: turn.input,
        signal: state.signal,
        onEvent: (e) => options.onEvent?.(e, index),
      });
      results.push(result);
      if (state.divergence) break;
      checkEnd(state, turn, index, result);
      if (state.divergence) break;
    }
    await options.keep?.(scratch);
  } finally {
    await live?.close();
    await replayTree.close();
  }
  const calls = transcript.turns.reduce((n, t) => n + t.steps.reduce((m, s) => m + s.calls.length, 0), 0);
  return {
    vid,
    live: live !== undefined,
    turns: transcript.turns.length,
    steps: state.steps.length,
    calls,
    executed: state.executed,
    modelRequests: 0,
    notes: state.notes,
    ...(state.divergence ? { divergence: state.divergence } : {}),
    results,
  };
}

/**
 * The steps a turn may take: the run's budget, or exactly its recorded steps when it stopped on
 * the budget (the recorded reason says so for the last turn).
 */
function stepBudget(t: RunTranscript, turn: RecordedTurn, index: number, max: number): number {
  const last = index === t.turns.length - 1;
  return last && recordedEnd(t)?.reason === "max_steps" ? turn.steps.length : max;
}

/** A turn ended: it must have used every recorded answer, and (the last) ended as recorded. */
function checkEnd(state: ReplayState, turn: RecordedTurn, index: number, result: TurnResult): void {
  const lastStep = turn.steps[turn.steps.length - 1];
  const used = state.steps.filter((s) => s.turn === index && s.index <= state.cursor).length;
  if (lastStep && used < turn.steps.length) {
    const stopped = turn.steps[used - 1] ?? lastStep;
    state.diverge({
      kind: "end",
      ...at(stopped),
      summary: `the turn ended (${result.reason}) after step ${stopped.turnStep}; the run's turn ${index + 1} went on to step ${lastStep.turnStep}`,
      diff: [],
    });
    return;
  }
  const end = index === state.transcript.turns.length - 1 ? recordedEnd(state.transcript) : undefined;
  if (end && lastStep && end.reason !== result.reason)
    state.diverge({
      kind: "end",
      ...at(lastStep),
      summary: `the turn ended with ${result.reason}; the run's ended with ${end.reason}`,
      diff: [],
    });
}
