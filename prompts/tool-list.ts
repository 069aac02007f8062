/**
 * Which offered tools a turn's step sends in full. `all`: every one. `deferred` (the policy's
 * choice, or `auto` past its threshold): the always-on tools and those `tools.search` found earlier
 * in the turn go in full; the rest get one line each in the system prompt, as many as fit the byte
 * budget, and a count of those left out — the model finds them with tools.search. Deferring needs
 * tools.search among the offered tools: without it the model could reach none of the rest.
 */
import type { ToolListPolicy } from "../tools/gate/policy.js";
import type { ValidTool } from "../tools/runtime.js";

export const SEARCH_TOOL = "tools.search";

/** The policy's default, for a catalogue read while the policy does not validate. */
const FALLBACK: ToolListPolicy = {
  mode: "auto",
  threshold: 64,
  budgetBytes: 4096,
  alwaysOn: ["edit.*", "shell.run", SEARCH_TOOL],
};

export interface ToolSelection {
  mode: "all" | "deferred";
  /** Sent with their schemas, listed with their snippets. */
  full: ValidTool[];
  /** One line each in the system prompt (deferred mode). */
  lines: string[];
  /** Tools neither sent nor listed: the model finds them by searching. */
  unlisted: number;
}

/** Does `name` match an always-on entry (a name, or `family.*`)? */
export function alwaysOn(name: string, entries: readonly string[]): boolean {
  return entries.some((e) => e === name || (e.endsWith(".*") && name.startsWith(e.slice(0, -1))));
}

/** `offered` sorted by name; `found`: names tools.search answered earlier in this turn. */
export function selectTools(
  offered: ValidTool[],
  policy: ToolListPolicy | undefined,
  found: ReadonlySet<string> = new Set(),
): ToolSelection {
  const p = policy ?? FALLBACK;
  const deferred =
    (p.mode === "deferred" || (p.mode === "auto" && offered.length > p.threshold)) &&
    offered.some((t) => t.name === SEARCH_TOOL);
  if (!deferred) return { mode: "all", full: offered, lines: [], unlisted: 0 };
  const full: ValidTool[] = [];
  const lines: string[] = [];
  let bytes = 0;
  let unlisted = 0;
  for (const t of offered) {
    if (alwaysOn(t.name, p.alwaysOn) || found.has(t.name)) {
      full.push(t);
      continue;
    }
    const line = `- ${t.name}: ${t.declaration.snippet}`;
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size <= p.budgetBytes) {
      lines.push(line);
      bytes += size;
    } else unlisted++;
  }
  return { mode: "deferred", full, lines, unlisted };
}
