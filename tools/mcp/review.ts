/**
 * A person's review of held upstream tools (pins.ts): what each held tool says now against what was
 * accepted, and the acceptance that pins the new version, so the tool is offered and callable again.
 * Both read and write `/byteseek/mcp-sync/<server>`, the acceptance with a compare-and-set on it so a
 * sync in between is never undone.
 */
import type { Tree } from "../../tree/types.js";
import { docValue } from "../doc/read-write.js";
import { McpReviewError } from "../errors.js";
import { type DroppedPin, droppedPins, type HeldReview, reviewOf } from "./pins.js";
import { MCP_DIR, syncKey } from "./registry.js";
import { readState, type SyncState, SyncStateDoc } from "./sync-state.js";

export interface McpReview {
  server: string;
  held: HeldReview[];
  /** Pins dropped because their tools left the upstream's list: coming back, each is held as re-added. */
  gone: DroppedPin[];
}

export interface McpAcceptance {
  server: string;
  /** The tree names of the tools accepted now: offered and callable from here on. */
  accepted: string[];
  /** Tree names of the tools still held. */
  held: string[];
}

export interface AcceptOptions {
  /** Upstream or tree names; absent or empty: every held tool. */
  tools?: readonly string[];
  /** The hash the person reviewed, by name: a tool held with another hash now is refused (MCP_REVIEW_STALE). */
  hashes?: Readonly<Record<string, string>>;
  /** Who accepts (kept in the pin). */
  by: string;
}

async function stateOf(tree: Tree, server: string) {
  const [entry, node] = await Promise.all([tree.get(`${MCP_DIR}${server}`), tree.get(syncKey(server))]);
  const state = readState(syncKey(server), node);
  if (!state && (!entry || entry.kind === "index"))
    throw new McpReviewError(
      "MCP_UNKNOWN_SERVER",
      `no MCP server "${server}" is registered or synced; see kvspace mcp list`,
      { server },
    );
  return { node, state };
}

/** Every held tool of `server`, oldest first, each with its diff against what was accepted. */
export async function reviewServer(tree: Tree, server: string): Promise<McpReview> {
  const { state } = await stateOf(tree, server);
  return { server, held: reviews(state), gone: droppedPins(state?.gone) };
}

function reviews(state: SyncState | undefined): HeldReview[] {
  return Object.entries(state?.held ?? {})
    .map(([tool, held]) => reviewOf(tool, held, state?.pins?.[tool]))
    .sort((a, b) => a.since - b.since || (a.tool < b.tool ? -1 : 1));
}

/** Accepts held tools of `server` as they are upstream now (compare-and-set on its sync state). */
export async function acceptTools(
  tree: Tree,
  server: string,
  options: AcceptOptions,
): Promise<McpAcceptance> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const { node, state } = await stateOf(tree, server);
    const held = { ...(state?.held ?? {}) };
    const byName = new Map<string, string>();
    for (const [tool, h] of Object.entries(held)) {
      byName.set(tool, tool);
      byName.set(h.name, tool);
    }
    const asked = options.tools?.length ? options.tools : Object.keys(held);
    const unknown = asked.filter((t) => !byName.has(t));
    if (unknown.length)
      throw new McpReviewError(
        "MCP_NOT_HELD",
        `nothing of "${server}" named ${unknown.map((t) => JSON.stringify(t)).join(", ")} is held for review (held: ${Object.keys(held).join(", ") || "none"}); see kvspace mcp review ${server}`,
        { server, tools: unknown },
      );
    if (!state || !node || node.kind === "index" || asked.length === 0)
      return { server, accepted: [], held: [] };
    const pins = { ...(state.pins ?? {}) };
    const accepted: string[] = [];
    const ts = Date.now();
    for (const name of asked) {
      const tool = byName.get(name) as string;
      const h = held[tool];
      if (!h) continue;
      const reviewed = options.hashes?.[name] ?? options.hashes?.[tool] ?? options.hashes?.[h.name];
      if (reviewed !== undefined && reviewed !== h.hash)
        throw new McpReviewError(
          "MCP_REVIEW_STALE",
          `"${tool}" of "${server}" changed again since it was reviewed (now ${h.hash.slice(0, 12)}); review it again`,
          { server, tool, hash: h.hash },
        );
      pins[tool] = { hash: h.hash, tool: h.tool, by: options.by, ts };
      delete held[tool];
      accepted.push(h.name);
    }
    const next: SyncState = { ...state, pins, held };
    const res = await tree.txn({
      compare: [{ key: syncKey(server), target: "modRev", value: node.modRev }],
      success: [{ op: "set", key: syncKey(server), value: docValue(SyncStateDoc, next) }],
    });
    if (res.succeeded)
      return {
        server,
        accepted: accepted.sort(),
        held: Object.values(held)
          .map((h) => h.name)
          .sort(),
      };
  }
  throw new McpReviewError(
    "MCP_REVIEW_STALE",
    `the sync state of "${server}" kept changing during the acceptance; review it again`,
    { server },
  );
}
