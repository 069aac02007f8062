import type { ChatMessage, ToolSchema } from "./types.js";

/** What provider APIs accept as a tool name (OpenAI and Anthropic alike). */
export const SAFE_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Our names ↔ names a provider accepts, for one request. Built from the tools sent (and the names
 * in the conversation so far, whose tools may since have been removed), so it is collision-proof:
 * two of our names never share a safe name.
 */
export interface ToolNameMap {
  /** The safe name to send for one of our names. */
  toSafe(name: string): string;
  /** Our name for a safe name the model used; an unknown name comes back unchanged. */
  fromSafe(safe: string): string;
}

export function createToolNameMap(
  tools: readonly ToolSchema[],
  messages: readonly ChatMessage[] = [],
): ToolNameMap {
  const names: string[] = [];
  const seen = new Set<string>();
  const add = (name: string): void => {
    if (!seen.has(name)) {
      seen.add(name);
      names.push(name);
    }
  };
  for (const tool of tools) add(tool.name);
  for (const message of messages) {
    if (message.role === "assistant") for (const call of message.toolCalls) add(call.name);
    else if (message.role === "tool") add(message.name);
  }

  const toSafe = new Map<string, string>();
  const fromSafe = new Map<string, string>();
  const claim = (name: string, safe: string): void => {
    toSafe.set(name, safe);
    fromSafe.set(safe, name);
  };
  // Names that are already safe keep themselves, so they never lose their name to a mapped one.
  for (const name of names) if (SAFE_TOOL_NAME.test(name)) claim(name, name);
  for (const name of names) {
    if (toSafe.has(name)) continue;
    const base = sanitize(name);
    let safe = base;
    for (let n = 2; fromSafe.has(safe); n++) {
      const suffix = `_${n}`;
      safe = base.slice(0, 64 - suffix.length) + suffix;
    }
    claim(name, safe);
  }

  return {
    toSafe: (name) => toSafe.get(name) ?? sanitize(name),
    fromSafe: (safe) => fromSafe.get(safe) ?? safe,
  };
}

function sanitize(name: string): string {
  const safe = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return safe === "" ? "_" : safe;
}
