import type { z } from "zod";
import { formatValue } from "../../tree/value.js";
import type { LlmImpl } from "../catalogue/declaration.js";
import { ToolError } from "../errors.js";
import type { SampleReply, SampleRequest } from "../gate/asks.js";
import type { ToolContext, ToolOutput } from "../types.js";

type LlmImplSpec = z.infer<typeof LlmImpl>;

/**
 * A model sub-call, injected by the agent part (tools know nothing of providers). Answers the
 * model's text; honours the signal.
 */
export interface LlmClient {
  complete(prompt: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string>;
  /** A conversation of text messages for an upstream MCP server's sampling request; absent: none can be made. */
  sample?(request: SampleRequest, signal: AbortSignal): Promise<SampleReply>;
}

export type { SampleReply, SampleRequest } from "../gate/asks.js";

/** Runs an `llm` impl: the prompt text read from the tree, then one sub-call of the model. */
export async function runLlmImpl(
  impl: LlmImplSpec,
  args: Record<string, unknown>,
  ctx: ToolContext,
  llm: LlmClient | undefined,
): Promise<ToolOutput> {
  if (!llm)
    throw new ToolError(
      "no_model",
      "no model configured: set BYTESEEK_LLM_URL (and BYTESEEK_LLM_MODEL) or /byteseek/llm/*, then call again; until then use another tool",
    );
  const node = await ctx.tree.get(impl.prompt);
  if (!node || node.kind === "index")
    throw new ToolError(
      "not_found",
      `the prompt ${impl.prompt} of this tool does not exist: write it with tree.set`,
      {
        details: { prompt: impl.prompt },
      },
    );
  const prompt = formatValue(node.value);
  const text = await llm.complete(prompt, args, ctx.signal);
  return { text, details: { prompt: impl.prompt } };
}
