/**
 * The suite-wide replay check (issue #32: "for every run recorded by the test suite, `--replay`
 * makes 0 tool executions and 0 model requests and prints the same display"). The fixtures that
 * start a byteseek for tests (test/agent/stack.ts, and through it the web pages') hand their agent
 * through `watchRuns`, which shows every turn run through it as `byteseek run` shows it; when the
 * fixture closes, `check()` replays every finished run in the store with the recorded model and the
 * recorded tools and fails the file when a replay executed a tool, asked the model anything,
 * diverged from its record, or showed a turn otherwise than the run did. No global state: each
 * watch belongs to one store (the suite shares one module graph, vitest `isolate: false`).
 */
import { expect } from "vitest";
import type { AgentEvent } from "../../agent/events.js";
import type { Agent } from "../../agent/loop.js";
import { replayRun } from "../../agent/replay/replay.js";
import { readTranscript, recordedEnd } from "../../agent/replay/transcript.js";
import { createTurnView } from "../../cli/turn-view.js";
import type { Runtime } from "../../tools/runtime.js";
import { isTreeError } from "../../tree/errors.js";
import type { Tree } from "../../tree/types.js";
import type { FakeLlm } from "../fake-llm/server.js";
import { silent } from "../tools/helpers.js";

/** A run only replays once it ended. */
const FINISHED = new Set(["done", "failed"]);

/** What a check found: how many runs it replayed, and how many of those it compared turn by turn with what they showed. */
export interface ReplayCheck {
  replayed: string[];
  compared: string[];
}

export interface RunWatch {
  /** The agent to hand on (to the tests, to buildApp): the watched one. */
  agent: Agent;
  /** A run the test changed on purpose after it ran (a tampered record, a removed message): its replay is not checked. */
  exempt(vid: string): void;
  /** Replays every finished run of the store and asserts each is exact; call it before the store closes. */
  check(): Promise<ReplayCheck>;
}

export interface WatchOptions {
  tree: Tree;
  /** Builds the prompts of a replay (its catalogue); a recorded replay runs nothing through it. */
  runtime: Runtime;
  agent: Agent;
  /** The fake model: a replay must send it nothing. */
  fake?: FakeLlm;
}

/**
 * What `byteseek run` prints for a turn, piped (no colours, no spinner, every call "took" 0 ms),
 * with every line of each result (the CLI shows three: the check compares them all), but for the
 * model's retries and a running call's progress lines.
 */
export function turnDisplay() {
  let text = "";
  const view = createTurnView({
    out: { write: (t: string) => (text += t) },
    color: false,
    spinner: false,
    now: () => 0,
    resultLines: 10_000,
  });
  return {
    // what the live world said while the run went on is not the run's record, so no replay shows
    // it: the model's retries (the transport's, before any byte of an answer) and a running
    // call's progress (its record keeps its result)
    onEvent: (e: AgentEvent) => {
      if (e.type !== "retry" && e.type !== "tool_progress") view.onEvent(e);
    },
    text: () => text,
  };
}

export function watchRuns(options: WatchOptions): RunWatch {
  const { tree, runtime, fake } = options;
  const inner = options.agent;
  /** Each watched run's turns as shown, in order; `undefined` once a turn of it was not seen whole. */
  const shown = new Map<string, string[] | undefined>();
  const exempt = new Set<string>();

  const agent: Agent = {
    async runTurn(input) {
      const display = turnDisplay();
      const onEvent = input.onEvent;
      let vid = input.vid;
      try {
        const result = await inner.runTurn({
          ...input,
          onEvent(e) {
            if (e.type === "turn_start") vid = e.vid;
            display.onEvent(e);
            onEvent?.(e);
          },
        });
        vid = result.vid;
        return result;
      } finally {
        if (vid !== undefined) {
          const turns = shown.has(vid) ? shown.get(vid) : [];
          shown.set(vid, turns ? [...turns, display.text()] : undefined);
        }
      }
    },
    async resumeRun(input) {
      // a resumed turn shows the calls it settled, which the replay (one turn, whole) shows as calls
      shown.set(input.vid, undefined);
      return inner.resumeRun(input);
    },
  };

  async function check(): Promise<ReplayCheck> {
    const out: ReplayCheck = { replayed: [], compared: [] };
    const problems: string[] = [];
    const requests = fake?.requests.length ?? 0;
    for (const vid of await runIds(tree)) {
      if (exempt.has(vid)) continue;
      const transcript = await readTranscript(tree, vid);
      if (!FINISHED.has(transcript.status ?? "")) continue;
      const displays: string[] = [];
      let display: ReturnType<typeof turnDisplay> | undefined;
      const report = await replayRun({
        tree,
        runtime,
        logger: silent,
        vid,
        transcript,
        onTurn() {
          if (display) displays.push(display.text());
          display = turnDisplay();
        },
        onEvent: (e) => display?.onEvent(e),
      });
      if (display) displays.push(display.text());
      out.replayed.push(vid);
      if (report.divergence)
        problems.push(`${vid}: diverged at step ${report.divergence.step}: ${report.divergence.summary}`);
      if (report.executed !== 0) problems.push(`${vid}: ${report.executed} tool calls executed`);
      const was = shown.get(vid);
      if (was && was.length === transcript.turns.length) {
        out.compared.push(vid);
        // an aborted turn showed the part of an answer it streamed before the abort: no record keeps it
        const last = recordedEnd(transcript)?.reason === "aborted" ? was.length - 1 : was.length;
        for (const [i, text] of was.slice(0, last).entries())
          if (displays[i] !== text)
            problems.push(
              `${vid}: turn ${i + 1} shows otherwise in the replay:\n${text}\n---- replayed:\n${displays[i]}`,
            );
      }
    }
    if (fake) expect(fake.requests.length, "a replay sent the model a request").toBe(requests);
    expect(problems, "every finished run replays exactly").toEqual([]);
    return out;
  }

  return { agent, exempt: (vid) => exempt.add(vid), check };
}

/** The runs of the store: the folders under /byteseek/session/. */
async function runIds(tree: Tree): Promise<string[]> {
  const out: string[] = [];
  let after: string | undefined;
  try {
    do {
      const page = await tree.list("/byteseek/session/", { limit: 1000, ...(after ? { after } : {}) });
      for (const c of page.children) if (c.kind === "index") out.push(c.name.replace(/\/$/, ""));
      after = page.next;
    } while (after);
  } catch (err) {
    if (!isTreeError(err, "TREE_NOT_FOUND")) throw err;
  }
  return out;
}
