/**
 * Which upstream tools byteseek calls at all — the one check every `mcp` call meets on its way to
 * an upstream, whatever declaration it came through (the synced one, a run's own `mcp` declaration
 * naming the same tool, the MCP facade, a relayed session): the tool must be in the registry
 * entry's `tools` allow-list (when it has one), have a synced declaration (the server's sync state
 * names it), and not be held for a person's review (pins.ts: changed, re-added or new upstream since
 * a person accepted it). The gate asks it before confirmation; the MCP client asks it again just
 * before the upstream is reached, so no path that skips the gate reaches a held tool.
 */
import type { Tree, TreeNode } from "../../tree/types.js";
import { isDocError } from "../errors.js";
import { heldReason } from "./pins.js";
import { MCP_DIR, parseEntry, syncKey } from "./registry.js";
import { readState, type SyncState } from "./sync-state.js";

export type UpstreamVerdict =
  | {
      ok: true;
      /** The tree name of the synced declaration of that upstream tool. */
      synced: string;
    }
  | {
      ok: false;
      /** `mcp_not_allowed`: the allow-list leaves it out, or no sync declared it; `held_for_review`: a person has not accepted what it says now. */
      code: "mcp_not_allowed" | "held_for_review";
      reason: string;
    };

/** The tree name the sync state `node` gives upstream tool `tool` of `server`, or undefined. */
function syncedIn(node: TreeNode | undefined, server: string, tool: string): string | undefined {
  if (node?.kind !== "json") return undefined;
  const tools = (node.value.value as { tools?: unknown } | null)?.tools;
  if (tools === null || typeof tools !== "object" || Array.isArray(tools)) return undefined;
  for (const [name, decl] of Object.entries(tools as Record<string, unknown>)) {
    const impl = (decl as { impl?: { server?: unknown; tool?: unknown } } | null)?.impl;
    if (impl?.server === server && impl.tool === tool) return name;
  }
  return undefined;
}

/** The tree name the sync gave upstream tool `tool` of `server`, from its sync state, or undefined. */
export async function syncedNameOf(tree: Tree, server: string, tool: string): Promise<string | undefined> {
  return syncedIn(await tree.get(syncKey(server)), server, tool);
}

/**
 * Whether a call may reach upstream tool `tool` of `server`: refused, with a reason written for the
 * model, when the registry entry's allow-list leaves it out, no sync has declared it, or it is held
 * for a person's review.
 */
export async function upstreamCallAllowed(
  tree: Tree,
  server: string,
  tool: string,
): Promise<UpstreamVerdict> {
  const [node, stateNode] = await Promise.all([tree.get(`${MCP_DIR}${server}`), tree.get(syncKey(server))]);
  const parsed = node?.kind === "json" ? parseEntry(node.value.value) : undefined;
  if (parsed?.ok && parsed.entry.tools !== undefined && !parsed.entry.tools.includes(tool))
    return {
      ok: false,
      code: "mcp_not_allowed",
      reason: `the MCP server "${server}" may be called only for the tools its entry lists (${MCP_DIR}${server} "tools": ${parsed.entry.tools.join(", ") || "none"}), and ${tool} is not one of them; use a listed tool, or ask the user to add it`,
    };
  const synced = syncedIn(stateNode, server, tool);
  if (synced === undefined)
    return {
      ok: false,
      code: "mcp_not_allowed",
      reason: `the tool ${tool} of the MCP server "${server}" has not been synced (no declaration of it at /byteseek/mcp-sync/${server}), so byteseek does not call it; use a synced tool (tree.list /byteseek/tools/), or ask the user to sync the server (kvspace mcp sync ${server})`,
    };
  let state: SyncState | undefined;
  try {
    state = readState(syncKey(server), stateNode);
  } catch (err) {
    if (!isDocError(err)) throw err;
    // a damaged state cannot say what is held: nothing of the server is called until it is mended
    return {
      ok: false,
      code: "mcp_not_allowed",
      reason: `the sync state of the MCP server "${server}" is damaged, so byteseek does not call its tools; ask the user to mend it: ${err.message}`,
    };
  }
  const held = state?.held?.[tool];
  if (held)
    return {
      ok: false,
      code: "held_for_review",
      reason: `${heldReason(server, held)}. Until then use another tool, or ask the user to review it.`,
    };
  return { ok: true, synced };
}
