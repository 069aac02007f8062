import type { BuiltinTool } from "../types.js";
import { createRunTool } from "./run.js";

export { createRunTool } from "./run.js";

/** The shell family: shell.run. */
export function createShellTools(): BuiltinTool[] {
  return [createRunTool()];
}
