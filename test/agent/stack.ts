/** What the agent tests start: a byteseek over a real classic-level tree in a temp folder, an empty workspace and the fake model. */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { ProviderDeps } from "../../agent/providers/index.js";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { silent, tempDir } from "../tools/helpers.js";
import { type RunWatch, watchRuns } from "./replay-check.js";

export interface AgentStack {
  dir: Awaited<ReturnType<typeof tempDir>>;
  workspace: string;
  fake: FakeLlm;
  tree: Tree;
  /** Its agent, watched: every run finished through it is replayed and checked when the stack stops (replay-check.ts). */
  bs: Byteseek;
  runs: RunWatch;
}

/** The API the fake model is spoken to in ("openai": its /v1 routes) and the provider's own deps (retry timings). */
export interface StackModel {
  api?: "openai" | "anthropic";
  providerDeps?: ProviderDeps;
}

/**
 * The folder is named after `prefix`; `env` adds to the model settings (BYTESEEK_LLM_MODELS, say).
 * The caller closes it (stopAgentStack does, in order).
 */
export async function startAgentStack(
  prefix: string,
  env: Record<string, string> = {},
  model: StackModel = {},
): Promise<AgentStack> {
  const api = model.api ?? "openai";
  const dir = await tempDir(prefix);
  const workspace = join(dir.path, "ws");
  await mkdir(workspace);
  const fake = await startFakeLlm();
  const tree = await openTree({ backend: "classic", location: join(dir.path, "db") });
  const bs = await createByteseek({
    tree,
    workspace,
    logger: silent,
    env: {
      BYTESEEK_LLM_API: api,
      BYTESEEK_LLM_URL: api === "openai" ? `${fake.url}/v1` : fake.url,
      BYTESEEK_LLM_MODEL: "fake-1",
      ...env,
    },
    ...(model.providerDeps ? { providerDeps: model.providerDeps } : {}),
  });
  const runs = watchRuns({ tree: bs.tree, runtime: bs.runtime, agent: bs.agent, fake });
  return { dir, workspace, fake, tree, bs: { ...bs, agent: runs.agent }, runs };
}

/**
 * Replays every finished run of the stack (each must be exact: replay-check.ts), then closes what
 * startAgentStack started, the last started first — also when the check fails.
 */
export async function stopAgentStack(stack: AgentStack): Promise<void> {
  try {
    await stack.runs.check();
  } finally {
    await closeAgentStack(stack);
  }
}

async function closeAgentStack(stack: AgentStack): Promise<void> {
  await stack.bs.close();
  await stack.tree.close();
  await stack.fake.close();
  await stack.dir.remove();
}
