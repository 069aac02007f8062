/**
 * An MCP tool's upstream pin on its page: the sha256 of the upstream declaration a person (or the
 * registration) accepted, kept in `/byteseek/mcp-sync/<server>` under `pins` by upstream name
 * (tools/mcp/pins.ts), and — when a sync found upstream saying something else — the held version
 * waiting for review. Read from the tree as the server stores it; a shape this page does not know
 * shows as "no pin" rather than failing the page.
 */
import { keys } from "../../shared/keys.js";
import type { Api, JsonValue } from "./api.js";
import { ApiError } from "./api.js";
import { formatTime, h } from "./dom.js";

type Obj = { [k: string]: JsonValue };
const isObj = (v: JsonValue | undefined): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: JsonValue | undefined): string | undefined => (typeof v === "string" ? v : undefined);

export interface UpstreamPin {
  server: string;
  /** The upstream tool's own name. */
  tool: string;
  /** The server was synced at least once (its sync state exists). */
  synced: boolean;
  /** What was accepted: absent when it never was. */
  pin?: { hash: string; by?: string; ts?: number };
  /** Upstream's version held for a person's review (changed, re-added or new since the pin). */
  held?: { hash: string; why?: string; since?: number };
}

/** The upstream pin of an `mcp` declaration's impl; undefined for any other kind. */
export async function readUpstreamPin(
  api: Api,
  impl: JsonValue | undefined,
): Promise<UpstreamPin | undefined> {
  if (!isObj(impl) || impl.kind !== "mcp") return undefined;
  const server = str(impl.server);
  const tool = str(impl.tool);
  if (!server || !tool) return undefined;
  let state: JsonValue | undefined;
  try {
    state = (await api.get(keys.mcpSync(server))).value;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { server, tool, synced: false };
    throw err;
  }
  const out: UpstreamPin = { server, tool, synced: isObj(state) };
  if (!isObj(state)) return out;
  const pin = hashed(state.pins, tool, "by", "ts");
  if (pin) out.pin = { hash: pin.hash, by: pin.text, ts: pin.time };
  const held = hashed(state.held, tool, "why", "since");
  if (held) out.held = { hash: held.hash, why: held.text, since: held.time };
  return out;
}

/** `map[tool]` when it is an object with a hash: the hash, a text field and a time field of it. */
function hashed(map: JsonValue | undefined, tool: string, text: string, time: string) {
  const v = isObj(map) ? map[tool] : undefined;
  const hash = isObj(v) ? str(v.hash) : undefined;
  if (!isObj(v) || hash === undefined) return undefined;
  const t = v[time];
  return { hash, text: str(v[text]), time: typeof t === "number" ? t : undefined };
}

const short = (hash: string): string => `sha256 ${hash.slice(0, 16)}`;

/** The `dd` of the facts list: the pinned hash and whether upstream's current version is accepted. */
export function upstreamPinText(p: UpstreamPin): HTMLElement {
  const el = h("dd", {
    id: "tool-upstream-pin",
    "data-accepted": String(p.pin !== undefined && p.held === undefined),
  });
  if (!p.synced) {
    el.append(`not pinned: server "${p.server}" was never synced`);
    return el;
  }
  if (p.pin) {
    el.append(h("code", { title: p.pin.hash }, short(p.pin.hash)));
    el.append(` · accepted${p.pin.by ? ` by ${p.pin.by}` : ""}${p.pin.ts ? ` ${formatTime(p.pin.ts)}` : ""}`);
  } else el.append("never accepted");
  if (p.held) {
    el.classList.add("problems");
    el.append(
      ` · upstream now says `,
      h("code", { title: p.held.hash }, short(p.held.hash)),
      `: held for review${p.held.why ? ` (${p.held.why})` : ""} — accept it under MCP servers on the Tools page`,
    );
  } else if (p.pin) el.append(" · upstream matches it");
  return el;
}
