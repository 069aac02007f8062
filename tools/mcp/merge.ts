import { isDeepStrictEqual } from "node:util";

/** A declaration as stored: a plain json object. */
export type DeclJson = Record<string, unknown>;

/** Fields the sync always owns: the name follows the mapping, impl binds the tool to its upstream. */
const SYNC_OWNED = new Set(["name", "impl"]);

/**
 * The declaration a re-sync writes: for each field, a person's local change wins (the field differs
 * between the tree and the upstream copy of the last sync, `base`), otherwise the new upstream
 * value is taken (absent upstream: the field goes). `name` and `impl` always come from upstream.
 * Without a base (the first sync of a tool) the upstream declaration is taken whole.
 */
export function mergeDeclaration(
  base: DeclJson | undefined,
  current: DeclJson,
  upstream: DeclJson,
): DeclJson {
  if (base === undefined) return { ...upstream };
  const out: DeclJson = {};
  const fields = new Set([...Object.keys(base), ...Object.keys(current), ...Object.keys(upstream)]);
  for (const field of fields) {
    const changed = !SYNC_OWNED.has(field) && !isDeepStrictEqual(current[field], base[field]);
    const value = changed ? current[field] : upstream[field];
    if (value !== undefined) out[field] = value;
  }
  return out;
}

/** The fields a person changed locally (for the sync's report). */
export function overriddenFields(base: DeclJson | undefined, current: DeclJson): string[] {
  if (base === undefined) return [];
  const fields = new Set([...Object.keys(base), ...Object.keys(current)]);
  return [...fields].filter((f) => !SYNC_OWNED.has(f) && !isDeepStrictEqual(current[f], base[f])).sort();
}

export function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}
