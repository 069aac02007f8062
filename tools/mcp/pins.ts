/**
 * Pins of upstream MCP tools. Each synced tool is pinned by the sha256 of the canonical JSON of what
 * it says — its name, title, description, input schema and annotations — as a person (or the
 * registration) accepted it. A sync that finds a tool changed, dropped and re-added, or new (after
 * the first sync) holds it: the catalogue leaves it out of every tool list and the gate refuses its
 * calls until a person accepts it after seeing the diff (`kvspace mcp review|accept`,
 * `GET /v1/mcp/<server>/review`, `POST /v1/mcp/<server>/accept`, the web page).
 */
import { createTwoFilesPatch } from "diff";
import { hashOf } from "../catalogue/hash.js";
import type { Gone, Held, HeldWhy, Pin, PinnedTool } from "./sync-state.js";
import type { UpstreamTool } from "./upstream-tools.js";

/** A pin dropped because its tool left the upstream's list, as a review lists it. */
export interface DroppedPin {
  tool: string;
  name: string;
  /** The hash a person had accepted. */
  accepted: string;
  acceptedBy: string;
  /** When the tool was seen gone. */
  since: number;
}

/**
 * Drops the pin of every tool that left the upstream's own list, keeping it in its gone record:
 * pins of what upstream no longer offers do not pile up, and a tool coming back is held as
 * re-added whatever its hash, reviewed against what was accepted before it left.
 */
export function prunePins(pins: Record<string, Pin>, gone: Record<string, Gone>): void {
  for (const [tool, g] of Object.entries(gone)) {
    const pin = pins[tool];
    if (!g.upstream || !pin) continue;
    gone[tool] = { ...g, pin };
    delete pins[tool];
  }
}

/** The pins dropped of tools gone upstream, as a review lists them. */
export function droppedPins(gone: Record<string, Gone> | undefined): DroppedPin[] {
  return Object.entries(gone ?? {})
    .filter(([, g]) => g.upstream && g.pin)
    .map(([tool, g]) => ({
      tool,
      name: g.name,
      accepted: (g.pin as Pin).hash,
      acceptedBy: (g.pin as Pin).by,
      since: g.ts,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The pinned fields of an upstream tool and their hash. */
export function pinOf(tool: UpstreamTool): { hash: string; tool: PinnedTool } {
  const pinned: PinnedTool = {
    name: tool.name,
    ...(typeof tool.title === "string" ? { title: tool.title } : {}),
    ...(typeof tool.description === "string" ? { description: tool.description } : {}),
    ...(tool.inputSchema !== undefined ? { inputSchema: tool.inputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
  };
  return { hash: hashOf(pinned), tool: pinned };
}

/** A hash as people read it: its first 12 hex digits. */
export function shortHash(hash: string): string {
  return hash.slice(0, 12);
}

const WHY_TEXT: Record<HeldWhy, string> = {
  changed: "changed since a person accepted it",
  "re-added": "was dropped and re-added upstream",
  new: "appeared upstream after the server was first synced",
};

/** Why a held tool is not offered, for a model or a listing: what happened and the person's command. */
export function heldReason(server: string, held: Pick<Held, "why" | "name">): string {
  return `${held.name} (a tool of the MCP server "${server}") ${WHY_TEXT[held.why]}, so it is held until a person reviews it: kvspace mcp review ${server}, then kvspace mcp accept ${server} ${held.name}`;
}

/** One held tool as a person reviews it. */
export interface HeldReview {
  /** The upstream tool name (what `accept` takes; the tree name works too). */
  tool: string;
  name: string;
  why: HeldWhy;
  since: number;
  hash: string;
  /** The hash a person last accepted, when there is one. */
  accepted?: string;
  acceptedBy?: string;
  /** The fields that differ from what was accepted (all of them for a tool never accepted). */
  fields: string[];
  /** Unified diff of each differing field, accepted → upstream now. */
  diff: string;
}

const FIELDS = ["title", "description", "inputSchema", "annotations"] as const;

/** The review of one held tool against its pin (absent: never accepted, everything is new). */
export function reviewOf(tool: string, held: Held, current: Pin | undefined): HeldReview {
  const pin = current ?? held.was;
  const fields: string[] = [];
  const parts: string[] = [];
  for (const field of FIELDS) {
    const before = pin ? fieldText(pin.tool[field]) : "";
    const after = fieldText(held.tool[field]);
    if (before === after) continue;
    fields.push(field);
    parts.push(
      createTwoFilesPatch(
        `accepted/${field}`,
        `upstream/${field}`,
        before,
        after,
        pin ? `accepted ${shortHash(pin.hash)}` : "never accepted",
        `upstream ${shortHash(held.hash)}`,
      ),
    );
  }
  return {
    tool,
    name: held.name,
    why: held.why,
    since: held.since,
    hash: held.hash,
    ...(pin ? { accepted: pin.hash, acceptedBy: pin.by } : {}),
    fields,
    diff: parts.join(""),
  };
}

/** A field as diffable text: a string as it is, anything else as sorted, indented JSON. */
function fieldText(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value.endsWith("\n") ? value : `${value}\n`;
  return `${JSON.stringify(sorted(value), null, 2)}\n`;
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, sorted(v)]),
    );
  return value;
}
