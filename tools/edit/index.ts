import type { BuiltinTool } from "../types.js";
import { createGlobTool } from "./glob.js";
import { createGrepTool } from "./grep.js";
import { createLsTool } from "./ls.js";
import { createMultiTool } from "./multi.js";
import { createReadTool } from "./read.js";
import { createRenameTool } from "./rename.js";
import { createReplaceTool } from "./replace.js";
import { createWriteTool } from "./write.js";

export { TEMP_PATTERN, writeFileAtomic } from "./atomic-write.js";
export { createGlobTool } from "./glob.js";
export { createGrepTool } from "./grep.js";
export { createLsTool } from "./ls.js";
export { createMultiTool } from "./multi.js";
export { createReadTool } from "./read.js";
export { createRenameTool } from "./rename.js";
export { createReplaceTool } from "./replace.js";
export { sweepTempFiles } from "./temp-sweep.js";
export { isInside, resolveWorkspacePath } from "./workspace-path.js";
export { createWriteTool } from "./write.js";

/** The edit family: read, write, replace, multi (on by default) and grep, glob, ls, rename (declared off). */
export function createEditTools(): BuiltinTool[] {
  return [
    createReadTool(),
    createWriteTool(),
    createReplaceTool(),
    createMultiTool(),
    createGrepTool(),
    createGlobTool(),
    createLsTool(),
    createRenameTool(),
  ];
}
