export { capText, IMPL_OUTPUT_BYTES, MAX_OUTPUT_LINES, MAX_TEXT_BYTES } from "./cap.js";
export {
  BuiltinImpl,
  compileParams,
  HttpImpl,
  IMPL_KINDS,
  type ImplKind,
  LlmImpl,
  type ParseDeclarationResult,
  parseDeclaration,
  ShellImpl,
  ToolDeclaration,
  ToolImpl,
  ToolName,
} from "./declaration.js";
export { isToolError, ToolError, type ToolErrorCode, type ToolKind } from "./errors.js";
export type { HookVerdict, ToolCall, ToolHooks } from "./hooks.js";
export type { LlmClient } from "./impl/llm.js";
export { type ArgProblem, paramsFromZod, signatureOf } from "./json-schema.js";
export { createKeyedLock } from "./locks.js";
export { defaultPolicy, POLICY_KEY, Policy, type PolicyInput } from "./policy.js";
export { endCallProcesses, killGroup, markedProcesses } from "./process/contain.js";
export { buildCommandEnv, CALL_MARK, type CommandEnvOptions, ENV_ALLOW } from "./process/env.js";
export { type CommandScope, createCommandScope, createScratchRoot } from "./process/scope.js";
export { SECRET_NAME, type WithdrawnEnv, withdrawSecrets } from "./process/secrets.js";
export { recordsDir, type ToolRecord, writeRecord } from "./records.js";
export {
  type CallOptions,
  createRuntime,
  type InvalidTool,
  type Runtime,
  type RuntimeOptions,
  TOOLS_DIR,
  type ToolCatalogue,
  type ValidTool,
} from "./runtime.js";
export { hashOf, type SeedReport, SHIPPED_DIR, seedTools } from "./seed.js";
export { createTreeDelTool } from "./tree/del.js";
export { createTreeGetTool } from "./tree/get.js";
export { createTreeListTool } from "./tree/list.js";
export { createTreeSetTool } from "./tree/set.js";
export { createTreeTools } from "./tree/tools.js";
export type {
  BuiltinTool,
  KeyedLock,
  ToolContext,
  ToolDeclarationInput,
  ToolOutput,
  ToolResult,
} from "./types.js";
export { type ToolUsage, UNKNOWN_TOOLS, usageKey } from "./usage.js";
