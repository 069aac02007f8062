import { TreeError } from "./errors.js";

/** Longest key accepted, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 4096;
/** Deepest key accepted, in segments. */
export const MAX_DEPTH = 64;
/** Names starting with this character are system entries: hidden from list and tree. */
export const SYSTEM_PREFIX = "‥";

/** A parsed, validated key: `/a/b` → depth 2, dir false; `/a/b/` → depth 2, dir true; `/` → 0. */
export interface ParsedKey {
  readonly key: string;
  /** The number of segments. */
  readonly depth: number;
  readonly dir: boolean;
}

// C0 and C1 control characters and DEL.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const SLASH = 47;
const DOT = 46;

/** Validates a key, or throws TREE_INVALID_KEY saying what is wrong. Every write comes through here. */
export function parseKey(key: unknown): ParsedKey {
  if (typeof key !== "string") throw invalid(String(key), "a key must be a string");
  if (!key.startsWith("/")) throw invalid(key, "a key must be absolute: start it with '/'");
  if (CONTROL.test(key)) throw invalid(key, "a key must not contain NUL or other control characters");
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short keys need no count.
  if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key, "utf8") > MAX_KEY_BYTES)
    throw invalid(key, `a key must be at most ${MAX_KEY_BYTES} bytes`);
  if (key === "/") return { key, depth: 0, dir: true };
  const dir = key.charCodeAt(key.length - 1) === SLASH;
  const end = dir ? key.length - 1 : key.length;
  // One pass over the segments between slashes, without splitting.
  let depth = 0;
  for (let start = 1; start <= end; ) {
    let stop = key.indexOf("/", start);
    if (stop < 0 || stop > end) stop = end;
    const len = stop - start;
    if (len === 0) throw invalid(key, "a key must not contain '//' (an empty segment)");
    if (key.charCodeAt(start) === DOT && (len === 1 || (len === 2 && key.charCodeAt(start + 1) === DOT)))
      throw invalid(key, "a key must not contain '.' or '..' segments");
    if (++depth > MAX_DEPTH) throw invalid(key, `a key must have at most ${MAX_DEPTH} levels`);
    start = stop + 1;
  }
  return { key, depth, dir };
}

/** Parses a key that must name a directory (ends with '/'). */
export function parseDirKey(key: unknown): ParsedKey {
  const parsed = parseKey(key);
  if (!parsed.dir) throw invalid(parsed.key, "a directory key must end with '/'");
  return parsed;
}

/** Parses a key that must name a value (does not end with '/'). */
export function parseValueKey(key: unknown): ParsedKey {
  const parsed = parseKey(key);
  if (parsed.dir) throw invalid(parsed.key, "a value key must not end with '/' (that names a directory)");
  return parsed;
}

/** The directory holding a key: `/a/b` and `/a/b/` → `/a/`; `/` has none. */
export function parentOf(key: string): string | undefined {
  if (key === "/") return undefined;
  const trimmed = key.endsWith("/") ? key.slice(0, -1) : key;
  return trimmed.slice(0, trimmed.lastIndexOf("/") + 1);
}

/** The last segment of a key, with a trailing '/' for directories. */
export function nameOf(key: string): string {
  if (key === "/") return "/";
  const dir = key.endsWith("/");
  const trimmed = dir ? key.slice(0, -1) : key;
  return trimmed.slice(trimmed.lastIndexOf("/") + 1) + (dir ? "/" : "");
}

/** Is `name` (a bare segment) a system entry? */
export function isSystemName(name: string): boolean {
  return name.startsWith(SYSTEM_PREFIX);
}

/** Is every name in this key visible (no system segment)? */
export function isVisibleKey(key: string): boolean {
  return !key.split("/").some(isSystemName);
}

/** Natural order of names: all-digit names first, numerically; then the rest by code point. */
export function compareNames(a: string, b: string): number {
  const da = /^[0-9]+$/.test(a);
  const db = /^[0-9]+$/.test(b);
  if (da && db) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  if (da !== db) return da ? -1 : 1;
  return compareCodePoints(a, b);
}

/** Code point order, the order of UTF-8 bytes (and so of LevelDB keys); JS `<` compares UTF-16 units. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

function invalid(key: string, why: string): TreeError {
  const shown = key.length > 120 ? `${key.slice(0, 120)}…` : key;
  return new TreeError("TREE_INVALID_KEY", `invalid key ${JSON.stringify(shown)}: ${why}`, { key: shown });
}
