/**
 * What runs the tools again in a `--live-tools` replay, for every entry point (`byteseek run
 * --replay`, `POST /v1/agent/runs/<vid>/replay`): a byteseek over the replay's tree (agent/replay/),
 * so the calls' records go to the replay's scratch tree and their effects to the workspace. It seeds
 * nothing and sweeps nothing: the store is the run's, and the workspace is left as it is.
 */
import type { LiveRuntime } from "../agent/replay/replay.js";
import { type ByteseekOptions, createByteseek } from "./byteseek.js";

export type ReplayToolsOptions = Omit<ByteseekOptions, "tree" | "seed" | "sweep">;

export function liveReplayTools(options: ReplayToolsOptions): LiveRuntime {
  return async function liveTools(replayTree) {
    const again = await createByteseek({ ...options, tree: replayTree, seed: false, sweep: false });
    return { runtime: again.runtime, close: () => again.close() };
  };
}
