/**
 * What the index reads of a declaration, taken leniently from its stored JSON: the text fields
 * and the parameters' names and descriptions. Whether a tool is valid, enabled and granted is the
 * catalogue's to say when a search is answered; the index only has to find it.
 */
import type { IndexedTool } from "./index.js";

/** How deep nested parameter schemas are read, and how much of them. */
const MAX_DEPTH = 4;
const MAX_PARAM_TEXT = 4000;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The parameters as text: each property's name, title and description, nested objects and items too. */
export function paramsText(schema: unknown): string {
  const parts: string[] = [];
  let size = 0;
  function walk(node: unknown, depth: number): void {
    if (depth > MAX_DEPTH || size > MAX_PARAM_TEXT || typeof node !== "object" || node === null) return;
    const s = node as Record<string, unknown>;
    const props = s.properties;
    if (typeof props === "object" && props !== null)
      for (const [name, sub] of Object.entries(props as Record<string, unknown>)) {
        const desc = typeof sub === "object" && sub !== null ? (sub as Record<string, unknown>) : {};
        const line = [name, str(desc.title), str(desc.description)].filter(Boolean).join(" ");
        parts.push(line);
        size += line.length;
        walk(sub, depth + 1);
      }
    if (s.items !== undefined) walk(s.items, depth + 1);
  }
  walk(schema, 0);
  return parts.join("\n").slice(0, MAX_PARAM_TEXT);
}

/** The indexed text of the declaration stored under `name`, or undefined when it has no usable text. */
export function indexedToolOf(name: string, raw: unknown): IndexedTool | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const d = raw as Record<string, unknown>;
  const description = str(d.description);
  if (description === undefined) return undefined;
  const impl = typeof d.impl === "object" && d.impl !== null ? (d.impl as Record<string, unknown>) : {};
  const guidelines = Array.isArray(d.guidelines)
    ? d.guidelines.filter((g): g is string => typeof g === "string")
    : undefined;
  return {
    name,
    title: str(d.title),
    description,
    snippet: str(d.snippet),
    guidelines,
    params: paramsText(d.params),
    server: impl.kind === "mcp" ? str(impl.server) : undefined,
  };
}
