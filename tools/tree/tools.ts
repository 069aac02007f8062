import type { BuiltinTool } from "../types.js";
import { createTreeDelTool } from "./del.js";
import { createTreeGetTool } from "./get.js";
import { createTreeListTool } from "./list.js";
import { createTreeSetTool } from "./set.js";

/** The tree family: `tree.get`, `tree.set`, `tree.list`, `tree.del`. */
export function createTreeTools(): BuiltinTool[] {
  return [createTreeGetTool(), createTreeSetTool(), createTreeListTool(), createTreeDelTool()];
}
