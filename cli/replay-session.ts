/**
 * `byteseek run --replay <vid>`: the replay runs in this process, on the store at KVSPACE (a
 * folder, one another process holds, etcd, or a server's http:// URL — it only reads the run), in
 * this shell's workspace. Nothing is seeded and nothing of the run is written; `--live-tools`
 * runs the calls again through a byteseek over the replay's tree (agent/replay/), so their records
 * go to the replay's scratch tree and their effects to the workspace.
 */
import type { AgentEvent } from "../agent/events.js";
import { replayRun } from "../agent/replay/replay.js";
import type { ReplayReport } from "../agent/replay/types.js";
import { createByteseek } from "../compose/byteseek.js";
import { liveReplayTools } from "../compose/replay-tools.js";
import { openHttpTree } from "../tree/http/index.js";
import type { Tree } from "../tree/types.js";
import { openStore, storeSpec } from "./open-store.js";
import { sessionLogger } from "./session-log.js";

export interface ReplaySessionOptions {
  env: Record<string, string | undefined>;
  cwd: string;
  vid: string;
  liveTools?: boolean;
  onEvent?: (e: AgentEvent, turn: number) => void;
  onTurn?: (turn: number, input: string) => void;
}

export async function replayFromStore(options: ReplaySessionOptions): Promise<ReplayReport> {
  const { env, cwd } = options;
  const spec = storeSpec(env);
  const { logger } = sessionLogger(env, spec);
  const tree: Tree = await openStore({
    env,
    cwd,
    logger: logger.child({ part: "tree" }),
    remote: openHttpTree,
  });
  const workspace = env.BYTESEEK_WORKSPACE || cwd;
  const storePath = spec.backend === "classic" ? { storePath: spec.location } : {};
  try {
    const bs = await createByteseek({
      tree,
      workspace,
      logger,
      env,
      seed: false,
      sweep: false,
      ...storePath,
    });
    const live = liveReplayTools({ workspace, logger, env, ...storePath });
    try {
      return await replayRun({
        tree: bs.tree,
        runtime: bs.runtime,
        logger,
        vid: options.vid,
        ...(options.liveTools ? { live } : {}),
        ...(options.onEvent ? { onEvent: options.onEvent } : {}),
        ...(options.onTurn ? { onTurn: options.onTurn } : {}),
      });
    } finally {
      await bs.close();
    }
  } finally {
    await tree.close();
  }
}
