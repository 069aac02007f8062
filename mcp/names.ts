/**
 * Tool names as MCP hosts take them. Many hosts refuse dots (`^[a-zA-Z0-9_-]{1,64}$`), so a tree
 * name `family.verb` is offered as `family_verb` and mapped back on a call. Two tree names can map
 * to one MCP name (`a.b_c`, `a_b.c`): the first in name order keeps it, the others are left out of
 * the list (still callable by their tree name through `byteseek_call`) and reported.
 */

/** What MCP hosts accept as a tool name. */
export const MCP_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The facades, always listed; no tree name maps onto them (tree names hold a dot). */
export const FIND_TOOL = "byteseek_find";
export const CALL_TOOL = "byteseek_call";

export function toMcpName(treeName: string): string {
  return treeName.replaceAll(".", "_");
}

export interface NameMap {
  /** MCP name → tree name. */
  toTree: ReadonlyMap<string, string>;
  /** Tree name → MCP name, for the names offered. */
  toMcp: ReadonlyMap<string, string>;
  /** Tree names left out, with why. */
  leftOut: Array<{ name: string; reason: string }>;
}

/** Maps `names` (any order) deterministically: in code-point order, first come first served. */
export function mapNames(names: readonly string[]): NameMap {
  const toTree = new Map<string, string>();
  const toMcp = new Map<string, string>();
  const leftOut: NameMap["leftOut"] = [];
  for (const name of [...names].sort(byCodePoint)) {
    const mcp = toMcpName(name);
    const taken = toTree.get(mcp);
    if (!MCP_TOOL_NAME.test(mcp)) leftOut.push({ name, reason: `"${mcp}" is not a name MCP hosts accept` });
    else if (mcp === FIND_TOOL || mcp === CALL_TOOL)
      leftOut.push({ name, reason: `"${mcp}" is one of byteseek's own MCP tools` });
    else if (taken !== undefined)
      leftOut.push({ name, reason: `"${mcp}" is already the MCP name of ${taken}` });
    else {
      toTree.set(mcp, name);
      toMcp.set(name, mcp);
    }
  }
  return { toTree, toMcp, leftOut };
}

export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
