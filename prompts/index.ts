export {
  type BuildPromptOptions,
  type BuiltPrompt,
  buildPrompt,
  lastTurnKey,
  MEMORY_DIR,
  type PromptTool,
} from "./build.js";
export {
  fillTemplate,
  PROMPT_DIR,
  readPrompt,
  seedPrompts,
  shippedPrompt,
  shippedPromptDir,
} from "./defaults.js";
