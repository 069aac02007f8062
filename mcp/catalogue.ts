/**
 * `tools/list` as MCP hosts get it, built from the tree on every request as the agent's tool list
 * is: every enabled, valid declaration the policy lets this run call, in name order, under its MCP
 * name, with its params as `inputSchema` and annotations derived from what it does — then the two
 * facades that reach any tool by its tree name, for hosts that ignore list_changed.
 */
import type { Tool, ToolAnnotations } from "@modelcontextprotocol/server";
import { CALL_TOOL, FIND_TOOL, mapNames, type NameMap } from "./names.js";
import type { ToolInfo } from "./source.js";

export interface McpCatalogue {
  /** What `tools/list` answers. */
  tools: Tool[];
  /** The tree's tools offered, by tree name. */
  offered: ReadonlyMap<string, ToolInfo>;
  names: NameMap;
}

const READ_ONLY = new Set(["edit.read", "edit.grep", "edit.glob", "edit.ls", "tree.get", "tree.list"]);
const DESTRUCTIVE = new Set([
  "edit.write",
  "edit.replace",
  "edit.multi",
  "edit.rename",
  "shell.run",
  "tree.set",
  "tree.del",
]);

/** Hints from what the tool does: the built-in it runs, or its impl kind; the declaration's own win. */
export function annotationsOf(t: ToolInfo): ToolAnnotations {
  const derived: ToolAnnotations = {};
  if (t.impl === "builtin" && t.ref !== undefined) {
    if (READ_ONLY.has(t.ref)) derived.readOnlyHint = true;
    else if (DESTRUCTIVE.has(t.ref)) {
      derived.readOnlyHint = false;
      derived.destructiveHint = true;
    }
    derived.openWorldHint = t.ref === "shell.run";
  } else if (t.impl === "shell") {
    derived.readOnlyHint = false;
    derived.destructiveHint = true;
    derived.openWorldHint = true;
  } else if (t.impl === "http") derived.openWorldHint = true;
  else if (t.impl === "llm") {
    derived.readOnlyHint = true;
    derived.openWorldHint = true;
  }
  return { ...(t.title === undefined ? {} : { title: t.title }), ...derived, ...t.annotations };
}

function mcpTool(t: ToolInfo, name: string): Tool {
  return {
    name,
    ...(t.title === undefined ? {} : { title: t.title }),
    description: t.description,
    inputSchema: t.params as Tool["inputSchema"],
    annotations: annotationsOf(t),
  };
}

/** Only what this run may call: enabled, and not denied by the policy as it stands. */
export function callable(t: ToolInfo): boolean {
  return t.enabled && t.blocked === undefined;
}

export const FIND_TOOL_DEF: Tool = {
  name: FIND_TOOL,
  title: "Find byteseek tools",
  description:
    "List byteseek's tools as they are in the tree right now (tools written during this session included): each with its tree name, description and input schema. Call one with byteseek_call.",
  inputSchema: {
    type: "object",
    properties: {
      query: {
        type: "string",
        description: "Words to look for in tool names and descriptions; absent: every tool",
      },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const CALL_TOOL_DEF: Tool = {
  name: CALL_TOOL,
  title: "Call a byteseek tool",
  description:
    "Call any byteseek tool by its tree name (family.verb, e.g. edit.read), with the same checks, approvals and records as a direct call. Use it for a tool byteseek_find shows but your tool list does not.",
  inputSchema: {
    type: "object",
    properties: {
      name: { type: "string", description: "The tool's tree name, e.g. edit.read (its MCP name works too)" },
      args: { type: "object", description: "The tool's arguments, as its input schema says" },
    },
    required: ["name"],
    additionalProperties: false,
  },
};

export function buildCatalogue(all: readonly ToolInfo[]): McpCatalogue {
  const offered = new Map(all.filter(callable).map((t) => [t.name, t]));
  const names = mapNames([...offered.keys()]);
  const tools = [FIND_TOOL_DEF, CALL_TOOL_DEF];
  for (const [treeName, mcpName] of names.toMcp) tools.push(mcpTool(offered.get(treeName)!, mcpName));
  return { tools, offered, names };
}

/**
 * What `byteseek_find` answers: with `ranked` (the catalogue index's answer, best first), those
 * tools in that order; else the tools whose name or description holds every word of `query`.
 */
export function findTools(catalogue: McpCatalogue, query = "", ranked?: readonly string[]): string {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const hits =
    ranked && words.length > 0
      ? ranked.map((n) => catalogue.offered.get(n)).filter((t): t is ToolInfo => t !== undefined)
      : [...catalogue.offered.values()].filter((t) => {
          const text = `${t.name} ${t.title ?? ""} ${t.description}`.toLowerCase();
          return words.every((w) => text.includes(w));
        });
  if (hits.length === 0)
    return words.length
      ? `No byteseek tool matches "${query}". Call byteseek_find without a query to see them all.`
      : "byteseek has no tool this run may call.";
  const lines = hits.map((t) =>
    JSON.stringify({
      name: t.name,
      mcpName: catalogue.names.toMcp.get(t.name),
      description: t.description,
      inputSchema: t.params,
      ...(t.confirm ? { needsApproval: true } : {}),
    }),
  );
  return `${hits.length} tool(s); call one with byteseek_call {"name": <name>, "args": {…}}:\n${lines.join("\n")}`;
}
