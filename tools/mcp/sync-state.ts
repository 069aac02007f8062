/**
 * What byteseek keeps of each upstream MCP server's last sync at `/byteseek/mcp-sync/<server>`
 * (keys.mcpSync): its state, the upstream copy of every synced declaration (the base a re-sync
 * compares a person's local changes against), and the pins, held and gone tools (pins.ts). The
 * sync writes it; the review, the gate's check of a call and `kvspace mcp list` read it back with
 * this schema. Read loose: a field a newer byteseek added is kept when the state is written back.
 */
import { z } from "zod";
import type { Tree } from "../../tree/types.js";
import { docFamily, parseDoc } from "../doc/read-write.js";

/** Why a sync ran. */
export const SyncReason = z.enum(["start", "registry", "list_changed", "manual"]);
export type SyncReason = z.infer<typeof SyncReason>;

/** A declaration as upstream describes it (merge.ts's `DeclJson`). */
const Declaration = z.record(z.string(), z.unknown());

/** What of an upstream tool is pinned: what the model reads and what its arguments are checked against. */
export const PinnedTool = z
  .object({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();
export type PinnedTool = z.infer<typeof PinnedTool>;

/** An accepted version of an upstream tool. */
export const Pin = z
  .object({
    hash: z.string(),
    tool: PinnedTool,
    /** Who accepted it: `person (…)`, or `run <vid> (registration)` for a server a run registered. */
    by: z.string(),
    ts: z.number(),
  })
  .loose();
export type Pin = z.infer<typeof Pin>;

/** Why a tool is held. */
export const HeldWhy = z.enum(["changed", "re-added", "new"]);
export type HeldWhy = z.infer<typeof HeldWhy>;

/** An upstream version of a tool waiting for a person. */
export const Held = z
  .object({
    hash: z.string(),
    tool: PinnedTool,
    /** The declaration's name in the tree (`<server>.<tool>`). */
    name: z.string(),
    why: HeldWhy,
    since: z.number(),
    /** For a re-added tool: what a person had accepted before it left (its pin, dropped then). */
    was: Pin.optional(),
  })
  .loose();
export type Held = z.infer<typeof Held>;

/** A tool that left the upstream's list (or the sync): what a person had changed in it, restored if it comes back. */
export const Gone = z
  .object({
    name: z.string(),
    /** The upstream copy it was last synced from, and the declaration as the tree held it. */
    base: Declaration,
    local: Declaration.optional(),
    /** It left the upstream's own list (not the entry's allow-list, nor a switched-off entry): coming back holds it. */
    upstream: z.boolean(),
    ts: z.number(),
    /** The pin it had, dropped when it left the upstream's list (the review says so; a re-add is diffed against it). */
    pin: Pin.optional(),
  })
  .loose();
export type Gone = z.infer<typeof Gone>;

/** What the last successful sync changed. */
const LastSync = z
  .object({
    added: z.array(z.string()),
    changed: z.array(z.string()),
    removed: z.array(z.string()),
    /** Tools whose local changes were kept, with the fields a person changed. */
    overridden: z.record(z.string(), z.array(z.string())),
    /** Upstream tools not synced because a declaration of that name is not this server's. */
    conflicts: z.array(z.string()),
  })
  .loose();

export const SyncState = z
  .object({
    server: z.string(),
    /** ok: the tools below are the upstream's as of `ts`; error: the last sync failed (tools kept as they were). */
    state: z.enum(["ok", "error"]),
    reason: SyncReason,
    ts: z.number(),
    error: z.string().optional(),
    /** The upstream declaration of every synced tool, by tree name: the base local overrides are found against. */
    tools: z.record(z.string(), Declaration),
    /** The registry entry's revision the last successful sync read: a new one is a fresh registration. */
    entryRev: z.number().optional(),
    /** What was accepted of each upstream tool, by upstream name (pins.ts). Absent before the first sync. */
    pins: z.record(z.string(), Pin).optional(),
    /** Upstream tools held for a person's review, by upstream name: not offered, calls refused. */
    held: z.record(z.string(), Held).optional(),
    /** Tools that left the upstream's list or the sync, by upstream name, with a person's changes to them. */
    gone: z.record(z.string(), Gone).optional(),
    last: LastSync.optional(),
  })
  .loose();
export type SyncState = z.infer<typeof SyncState>;

/** The sync state family (tools/doc/docs.ts names it). */
export const SyncStateDoc = docFamily("an MCP server's sync state", SyncState);

/**
 * The sync state `node` holds (at `key`), parsed; undefined when there is none. One that does not
 * match is `DOC_MALFORMED`: its pins and held tools decide what is offered, so a damaged state is
 * never read as "nothing synced yet" (which would accept every tool afresh).
 */
export function readState(key: string, node: Awaited<ReturnType<Tree["get"]>>): SyncState | undefined {
  return parseDoc(SyncStateDoc, key, node);
}
