/**
 * What one listing answer carries is bounded (issue 15, item 7): a value whose JSON text is over
 * LIST_PREVIEW_OVER is listed as `preview` (its first PREVIEW_CHARS characters) and `size` (its
 * bytes) instead of `value` — GET the key for the whole of it — and an answer stops adding
 * children once it carries LIST_BYTES, answering `next` for the rest. The tree is read
 * LIST_CHUNK children at a time, so at most that many whole values are held at once (600 values
 * of 1 MiB once took the server to 1.4 GB and a 500).
 */

import type { NodeJson } from "../tree/http/index.js";
import { childToJson } from "../tree/http/index.js";
import type { ListChild, ListOptions, ListResult, Tree } from "../tree/types.js";

/** A value whose JSON text is longer than this (characters) is listed as a preview. */
export const LIST_PREVIEW_OVER = 64 * 1024;
/** Characters of a preview. */
export const PREVIEW_CHARS = 1024;
/** Characters of values and previews one listing answer carries, about; the rest via `next`. */
export const LIST_BYTES = 4 * 1024 * 1024;
/** Children read from the tree at a time. */
export const LIST_CHUNK = 128;

/** A listed child as JSON, a large value as a preview, and the characters it weighs. */
export function listedChild(
  child: ListChild,
  name: string = child.name,
): { json: ListedJson; weight: number } {
  const json: ListedJson = childToJson(child, name);
  if (json.value === undefined) return { json, weight: 200 };
  const v = json.value;
  const text = typeof v === "string" ? v : JSON.stringify(v);
  if (text.length <= LIST_PREVIEW_OVER) return { json, weight: 200 + text.length };
  delete json.value;
  json.size = typeof v === "string" ? Buffer.byteLength(v, "utf8") : Buffer.byteLength(text, "utf8");
  json.preview = text.slice(0, PREVIEW_CHARS);
  return { json, weight: 200 + PREVIEW_CHARS };
}

export type ListedJson = NodeJson & { name: string };

/**
 * One page of a directory's children: at most `limit`, LIST_CHUNK at a time, stopping once the
 * answer weighs LIST_BYTES (`next` then names the last child given).
 */
export async function listPage(
  tree: Tree,
  dir: string,
  o: { limit: number; after?: string; values?: boolean; system?: boolean },
): Promise<{ key: string; children: ListedJson[]; next?: string }> {
  const children: ListedJson[] = [];
  let weight = 0;
  let after = o.after;
  for (;;) {
    const options: ListOptions = { limit: Math.min(LIST_CHUNK, o.limit - children.length) };
    if (after !== undefined) options.after = after;
    if (o.values === false) options.values = false;
    if (o.system) options.system = true;
    const page: ListResult = await tree.list(dir, options);
    const key = page.key;
    for (const [i, c] of page.children.entries()) {
      const { json, weight: w } = listedChild(c);
      children.push(json);
      weight += w;
      const more = i < page.children.length - 1 || page.next !== undefined;
      if (weight >= LIST_BYTES && more) return { key, children, next: c.name };
    }
    if (page.next === undefined) return { key, children };
    if (children.length >= o.limit) return { key, children, next: page.next };
    after = page.next;
  }
}
