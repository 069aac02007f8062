/** What the agent tests start: a byteseek over a real classic-level tree in a temp folder, an empty workspace and the fake model. */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type Byteseek, createByteseek } from "../../compose/byteseek.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { type FakeLlm, startFakeLlm } from "../fake-llm/server.js";
import { silent, tempDir } from "../tools/helpers.js";

export interface AgentStack {
  dir: Awaited<ReturnType<typeof tempDir>>;
  workspace: string;
  fake: FakeLlm;
  tree: Tree;
  bs: Byteseek;
}

/**
 * The folder is named after `prefix`; `env` adds to the model settings (BYTESEEK_LLM_MODELS, say).
 * The caller closes bs, tree and fake, and removes dir.
 */
export async function startAgentStack(prefix: string, env: Record<string, string> = {}): Promise<AgentStack> {
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
      BYTESEEK_LLM_API: "openai",
      BYTESEEK_LLM_URL: `${fake.url}/v1`,
      BYTESEEK_LLM_MODEL: "fake-1",
      ...env,
    },
  });
  return { dir, workspace, fake, tree, bs };
}
