/**
 * Which upstream tools byteseek calls at all — the one check every `mcp` call meets on its way to
 * an upstream, whatever declaration it came through (the synced one, a run's own `mcp` declaration
 * naming the same tool, the MCP facade): the tool must be in the registry entry's `tools`
 * allow-list (when it has one) and have a synced declaration (the server's sync state names it).
 * Later checks of the same kind (a pinned tool a person has not accepted) belong here too.
 */
import type { Tree } from "../../tree/types.js";
import { MCP_DIR, parseEntry, syncKey } from "./registry.js";

export type UpstreamVerdict =
  | {
      ok: true;
      /** The tree name of the synced declaration of that upstream tool. */
      synced: string;
    }
  | { ok: false; reason: string };

/** The tree name the sync gave upstream tool `tool` of `server`, from its sync state, or undefined. */
export async function syncedNameOf(tree: Tree, server: string, tool: string): Promise<string | undefined> {
  const node = await tree.get(syncKey(server));
  if (node?.kind !== "json") return undefined;
  const tools = (node.value.value as { tools?: unknown } | null)?.tools;
  if (tools === null || typeof tools !== "object" || Array.isArray(tools)) return undefined;
  for (const [name, decl] of Object.entries(tools as Record<string, unknown>)) {
    const impl = (decl as { impl?: { server?: unknown; tool?: unknown } } | null)?.impl;
    if (impl?.server === server && impl.tool === tool) return name;
  }
  return undefined;
}

/**
 * Whether a call may reach upstream tool `tool` of `server`: refused, with a reason written for the
 * model, when the registry entry's allow-list leaves it out or no sync has declared it.
 */
export async function upstreamCallAllowed(
  tree: Tree,
  server: string,
  tool: string,
): Promise<UpstreamVerdict> {
  const node = await tree.get(`${MCP_DIR}${server}`);
  const parsed = node?.kind === "json" ? parseEntry(node.value.value) : undefined;
  if (parsed?.ok && parsed.entry.tools !== undefined && !parsed.entry.tools.includes(tool))
    return {
      ok: false,
      reason: `the MCP server "${server}" may be called only for the tools its entry lists (${MCP_DIR}${server} "tools": ${parsed.entry.tools.join(", ") || "none"}), and ${tool} is not one of them; use a listed tool, or ask the user to add it`,
    };
  const synced = await syncedNameOf(tree, server, tool);
  if (synced === undefined)
    return {
      ok: false,
      reason: `the tool ${tool} of the MCP server "${server}" has not been synced (no declaration of it at /byteseek/mcp-sync/${server}), so byteseek does not call it; use a synced tool (tree.list /byteseek/tools/), or ask the user to sync the server (kvspace mcp sync ${server})`,
    };
  return { ok: true, synced };
}
