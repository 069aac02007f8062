/**
 * The conditional headers. A value's ETag is its version (`"3"`); a directory's adds its child count
 * (`"3.5"`), since adding or removing a child changes the count a `?node=1` GET answers without
 * moving the directory's version. `If-Match` takes a version, or either ETag as a GET sent it.
 */
import type { Tree, TreeNode } from "../tree/types.js";
import { ServerError } from "./errors.js";

/** The headers every answer carries: the tree's revision, and the oldest a watch can resume from. */
export function revisionHeaders(tree: Tree): Record<string, string> {
  return {
    "x-byteseek-revision": String(tree.revision()),
    "x-byteseek-compacted-revision": String(tree.compactedRev()),
  };
}

/** The ETag of a version: a strong, quoted entity tag. */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** The ETag of a node as a GET answers it: it changes whenever the answer does. */
export function nodeEtag(node: TreeNode): string {
  return node.kind === "index" ? `"${node.version}.${node.count}"` : etagOf(node.version);
}

/** A condition header: absent, `*`, or one ETag (a version, and for a directory its child count). */
export type Condition = undefined | "*" | { version: number; count?: number };

export function parseCondition(name: string, raw: string | string[] | undefined): Condition {
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? raw.join(",") : raw).trim();
  if (text === "*") return "*";
  const m = /^(?:W\/)?"?([0-9]{1,15})(?:\.([0-9]{1,15}))?"?$/.exec(text);
  if (!m)
    throw new ServerError(
      "HTTP_INVALID_HEADER",
      `${name} must be * or one version (the ETag a GET answered, e.g. "3"), got ${JSON.stringify(text.slice(0, 60))}`,
      { header: name },
    );
  return m[2] === undefined ? { version: Number(m[1]) } : { version: Number(m[1]), count: Number(m[2]) };
}
