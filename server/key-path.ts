/**
 * Keys in URLs. A key travels as the URL path after the route's prefix, each segment
 * percent-encoded as `encodeURIComponent` does (UTF-8 bytes; '/' between segments stays literal):
 * `/a b/ü?` → `/v1/tree/a%20b/%C3%BC%3F`. The server percent-decodes the whole rest once, so
 * `%2F` is a '/' (names cannot hold one anyway) and '+' is a plus, not a space. Bytes that do not
 * decode to well-formed UTF-8, and anything the tree refuses (control characters, `.`/`..`,
 * `//`), answer 400 TREE_INVALID_KEY. A key with a '?' or '#' must have them encoded.
 */
import { TreeError } from "../tree/errors.js";

/** The key a request names: the raw URL's path after `prefix`, decoded. An empty rest is the root. */
export function keyFromUrl(rawUrl: string, prefix: string): string {
  const q = rawUrl.indexOf("?");
  const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const rest = path.slice(prefix.length);
  if (rest === "" || rest === "/") return "/";
  if (!rest.includes("%")) return rest;
  try {
    return decodeURIComponent(rest);
  } catch {
    const shown = rest.length > 120 ? `${rest.slice(0, 120)}…` : rest;
    throw new TreeError(
      "TREE_INVALID_KEY",
      `invalid key ${JSON.stringify(shown)}: bad percent-encoding (keys are UTF-8, each byte of a segment %XX-encoded)`,
      { key: shown },
    );
  }
}

/** The URL path of a key under `prefix`: each segment percent-encoded, '/' kept. */
export function keyToUrlPath(key: string, prefix: string): string {
  return prefix + key.split("/").map(encodeURIComponent).join("/");
}
