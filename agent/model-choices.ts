/**
 * The models a person may pick for a turn (the web page's model picker, through `GET /v1/info`):
 * the configured model first (`BYTESEEK_LLM_MODEL` or `/byteseek/llm/model`, as a turn resolves
 * it), then the others the server's owner listed for the same provider — `BYTESEEK_LLM_MODELS`
 * (comma-separated) or, failing it, `/byteseek/llm/models` (text, comma-separated, or a JSON list).
 * A turn names its pick as its `llm.model`; the URL and key stay the server's.
 */
import { keys } from "../shared/keys.js";
import type { Tree } from "../tree/types.js";
import { resolveLlmConfig } from "./llm-config.js";
import type { ModelChoices } from "./model-schemas.js";

export { ModelChoices } from "./model-schemas.js";

export const MODELS_ENV = "BYTESEEK_LLM_MODELS";
export const MODELS_KEY = keys.llm("models");

/** What the server would run a turn with, and the other models listed for its provider. */
export async function modelChoices(
  env: Record<string, string | undefined>,
  tree: Tree,
): Promise<ModelChoices> {
  let config: Awaited<ReturnType<typeof resolveLlmConfig>>;
  try {
    config = await resolveLlmConfig({ env, tree });
  } catch (err) {
    return { configured: false, models: [], problem: (err as Error).message };
  }
  const listed = await listedModels(env, tree);
  const models = [config.model, ...listed.filter((m) => m !== config.model)];
  return { configured: true, api: config.api, model: config.model, models };
}

async function listedModels(env: Record<string, string | undefined>, tree: Tree): Promise<string[]> {
  const fromEnv = env[MODELS_ENV]?.trim();
  if (fromEnv) return split(fromEnv);
  const node = await tree.get(MODELS_KEY).catch(() => undefined);
  if (node === undefined || node.kind === "index") return [];
  const value = node.value.value;
  if (Array.isArray(value)) return value.filter((m): m is string => typeof m === "string" && m.trim() !== "");
  return typeof value === "string" ? split(value) : [];
}

const split = (text: string): string[] =>
  [...new Set(text.split(",").map((m) => m.trim()))].filter((m) => m !== "" && m.length <= 500);
