/**
 * Who owns what under /byteseek/, and what a run may do to it — the one place these rules live.
 *
 * - **The runtime's areas** (RUNTIME_DIRS: sessions, records, usage, approvals, run state, the MCP
 *   sync state) are written by byteseek's runtime alone: a tool never writes there.
 * - **A person's write makes a key theirs.** A write without a run id (HTTP, the CLI, the web page,
 *   an approved change) under /byteseek/ clears the key's owner run (`disown`, applied by the
 *   checked tree), so a person who tightens a run's declaration takes it over.
 * - **A run's change to what a person owns** (a tool declaration, a registry entry, memory, a
 *   prompt: any key under /byteseek/ without an owner run) needs that person's approval, always.
 * - **A person's stricter settings are a floor**: `confirm: true` and `enabled: false` on a
 *   declaration, `enabled: false` and the `tools` allow-list on a registry entry. A run's write that
 *   lowers one is refused, approved or not: a person changes it themselves.
 * - **A synced tool's name stays its server's**: a run never writes a declaration over it that
 *   runs something else (another impl); that is refused, not asked.
 */
import { createTwoFilesPatch } from "diff";
import { dirs } from "../../shared/keys.js";
import type { Tree, TreeNode } from "../../tree/types.js";
import { formatValue, type TreeValue, valueToJson } from "../../tree/value.js";
import { ToolError } from "../errors.js";
import { MCP_DIR, maskSecrets, PERSON_ONLY_FIELDS, serverOfKey, syncKey } from "../mcp/registry.js";
import type { ProposedChange } from "./approvals.js";

const BYTESEEK = dirs.byteseek;
const TOOLS_DIR = dirs.tools;

/**
 * What only the runtime writes: runs' sessions, call records, usage and state, the approvals people
 * decide, and what the MCP sync keeps. A tool writing there could forge another run's history, its
 * own approval, or the base a sync finds a person's overrides against.
 */
export const RUNTIME_DIRS = [
  dirs.sessions,
  dirs.records,
  dirs.usage,
  dirs.approvals,
  // a person's acceptance of a run's tool for every run (agent-tools.ts): a run must not grant it itself
  dirs.toolAccept,
  dirs.mcpSync,
  dirs.runs,
] as const;

/** The runtime area `key` (a value or a directory) lies in, if any. */
export function runtimeArea(key: string): string | undefined {
  return RUNTIME_DIRS.find((d) => key.startsWith(d) || `${key}/` === d);
}

/**
 * Whether a write without a run id at `key` makes the key a person's: anything under /byteseek/
 * but the runtime's areas (whose writers the runtime decides).
 */
export function personOwnable(key: string): boolean {
  return key.startsWith(BYTESEEK) && runtimeArea(key) === undefined;
}

/** Whether a stored node is a person's: a value under /byteseek/ with no owner run. */
export function ownedByPerson(key: string, node: TreeNode | undefined): node is TreeNode {
  return node !== undefined && node.kind !== "index" && node.vid === undefined && personOwnable(key);
}

type JsonObject = Record<string, unknown>;

function objectOf(v: TreeValue | undefined): JsonObject | undefined {
  if (v?.kind !== "json") return undefined;
  const o = v.value;
  return o !== null && typeof o === "object" && !Array.isArray(o) ? (o as JsonObject) : undefined;
}

/**
 * The stricter settings of a person's value that `next` would lower (undefined `next`: none — a
 * deletion is asked about, not refused), one phrase each; empty when nothing is lowered.
 */
export function loweredFloors(key: string, prev: TreeValue, next: TreeValue | undefined): string[] {
  if (next === undefined) return [];
  const before = objectOf(prev);
  if (!before) return [];
  const after = objectOf(next) ?? {};
  const out: string[] = [];
  const isDecl = key.startsWith(TOOLS_DIR) && !key.slice(TOOLS_DIR.length).includes("/");
  if (isDecl && before.confirm === true && after.confirm !== true) out.push("confirm: true");
  if ((isDecl || serverOfKey(key) !== undefined) && before.enabled === false && after.enabled !== false)
    out.push("enabled: false");
  if (serverOfKey(key) !== undefined && Array.isArray(before.tools)) {
    const allowed = new Set(before.tools);
    const wider = !Array.isArray(after.tools) || after.tools.some((t) => !allowed.has(t));
    if (wider) out.push(`the tools allow-list ${JSON.stringify(before.tools)}`);
  }
  return out;
}

/**
 * The person-only fields of a registry entry (PERSON_ONLY_FIELDS: readOnlyPaths, net) that a run's
 * write `next` sets to anything but what a person's stored entry already holds.
 */
function personOnlyFields(key: string, node: TreeNode | undefined, next: TreeValue | undefined): string[] {
  if (serverOfKey(key) === undefined) return [];
  const after = objectOf(next);
  if (!after) return [];
  const before = node && node.kind !== "index" && ownedByPerson(key, node) ? objectOf(node.value) : undefined;
  return PERSON_ONLY_FIELDS.filter(
    (f) => after[f] !== undefined && JSON.stringify(after[f]) !== JSON.stringify(before?.[f]),
  );
}

/**
 * Whether the declaration at /byteseek/tools/<name> is one an MCP sync wrote: its impl is `mcp`
 * and its server's sync state lists it. Its name belongs to that server.
 */
export async function syncedDeclaration(
  tree: Tree,
  name: string,
  node: TreeNode | undefined,
): Promise<{ server: string; impl: unknown } | undefined> {
  const decl = objectOf(node && node.kind !== "index" ? node.value : undefined);
  const impl = decl?.impl as { kind?: unknown; server?: unknown } | undefined;
  if (impl?.kind !== "mcp" || typeof impl.server !== "string") return undefined;
  const server = impl.server;
  const state = await tree.get(syncKey(server)).catch(() => undefined);
  const tools = objectOf(state && state.kind !== "index" ? state.value : undefined)?.tools;
  if (tools === null || typeof tools !== "object" || !(name in (tools as JsonObject))) return undefined;
  return { server, impl };
}

/** A value as the diff shows it: a registry entry's secrets masked (the approval entry is readable by runs). */
function textOf(key: string, v: TreeValue): string {
  return v.kind === "json"
    ? `${JSON.stringify(maskSecrets(key, v.value), null, 2)}\n`
    : `${formatValue(v)}\n`;
}

/** What a run's write or deletion meets (besides the key guards of the tree tools). */
export interface RunWrite {
  tree: Tree;
  /** The run writing. */
  vid: string;
  /** A person approved this very call: a change to what they own goes ahead (never below a floor). */
  approved: boolean;
  key: string;
  action: "set" | "del";
  next?: TreeValue;
}

/**
 * A run's write (`tree.set`) or deletion (`tree.del`) of `key`, checked against the ownership rules
 * at the top of this file. Throws the refusal (`denied`), or `needs_approval` carrying the change and
 * its diff (the runtime turns it into an approval request when a person can be asked). Answers
 * whether the write goes ahead as the person's (they approved this call): then it keeps no run id.
 */
export async function guardRunWrite(w: RunWrite): Promise<{ asPerson: boolean }> {
  const { tree, key, action, next } = w;
  const node = await tree.get(key);
  const widened = personOnlyFields(key, node, next);
  if (widened.length > 0 && !w.approved)
    throw new ToolError(
      "denied",
      `${widened.join(" and ")} of an MCP server entry ${widened.length > 1 ? "are" : "is"} a person's setting (what the server's sandbox shows or reaches beyond the policy's grant): no run sets ${widened.length > 1 ? "them" : "it"}. Write the entry without ${widened.length > 1 ? "them" : "it"}, or ask the user to add ${widened.length > 1 ? "them" : "it"}.`,
      { details: { key, rule: "person only", fields: widened } },
    );
  if (!node || node.kind === "index") return { asPerson: false };
  if (key.startsWith(TOOLS_DIR) && !key.slice(TOOLS_DIR.length).includes("/")) {
    const name = key.slice(TOOLS_DIR.length);
    const synced = await syncedDeclaration(tree, name, node);
    const nextImpl = objectOf(next)?.impl;
    if (synced && action === "set" && JSON.stringify(nextImpl) !== JSON.stringify(synced.impl))
      throw new ToolError(
        "denied",
        `${name} is a tool synced from the MCP server "${synced.server}" (${MCP_DIR}${synced.server}): its name and impl stay that server's. Declare your tool under another name.`,
        { details: { key, rule: "synced", server: synced.server } },
      );
  }
  if (!ownedByPerson(key, node)) return { asPerson: false };
  const lowered = loweredFloors(key, node.value, next);
  if (lowered.length > 0)
    throw new ToolError(
      "denied",
      `${key} was set by a person with ${lowered.join(", ")}; no run may lower that, approved or not. Leave it as it is, or ask the user to change it themselves.`,
      { details: { key, rule: "person floor", floors: lowered } },
    );
  // approved by the person in the call itself: written as theirs, so it stays theirs
  if (w.approved) return { asPerson: true };
  const diff = createTwoFilesPatch(
    key,
    key,
    textOf(key, node.value),
    next ? textOf(key, next) : "",
    "as written",
    action === "del" ? "deleted" : "proposed",
  );
  const change: ProposedChange = {
    key,
    action,
    ifVersion: node.version,
    diff,
    ...(next ? { value: { kind: next.kind, value: valueToJson(next) } } : {}),
  };
  throw new ToolError(
    "needs_approval",
    `${key} was written by a person, so ${action === "del" ? "deleting" : "changing"} it needs their approval, and none could be asked for this call; ask the user to make the change, or write under another name instead.`,
    { details: { key, change } },
  );
}
