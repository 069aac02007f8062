import type { LlmConfig } from "../llm-config.js";
import { createAnthropicProvider } from "./anthropic.js";
import type { ProviderDeps } from "./connection.js";
import { createOpenAiProvider } from "./openai.js";
import type { Provider } from "./types.js";

/** The provider for `config.api`. */
export function createProvider(config: LlmConfig, deps: ProviderDeps = {}): Provider {
  switch (config.api) {
    case "openai":
      return createOpenAiProvider(config, deps);
    case "anthropic":
      return createAnthropicProvider(config, deps);
  }
}

export { ANTHROPIC_VERSION, createAnthropicProvider } from "./anthropic.js";
export type { ProviderDeps } from "./connection.js";
export { createOpenAiProvider } from "./openai.js";
export { backoffDelay, parseRetryAfter, type RetryOptions } from "./retry.js";
export { createToolNameMap, SAFE_TOOL_NAME, type ToolNameMap } from "./tool-names.js";
export type {
  AssistantMessage,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  CompleteOptions,
  Provider,
  StopReason,
  StreamEvent,
  ToolCall,
  ToolResultMessage,
  ToolSchema,
  Usage,
  UserMessage,
} from "./types.js";
