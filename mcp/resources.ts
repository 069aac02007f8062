/**
 * Tree values as MCP resources: `byteseek://tree/<key>` (each key segment percent-encoded), a
 * resource template for any key, and `resources/list` for the memory entries. What a run may not
 * read with `tree.get` is no resource (the gate's own rule, treeReadRefusal: the run's `tree` grant,
 * denyKeys, the model settings, the policy), nor are system entries; a registry entry's secret fields
 * read masked (SECRET_FIELDS).
 */
import type { ListResourceTemplatesResult, ReadResourceResult, Resource } from "@modelcontextprotocol/server";
import { MEMORY_DIR } from "../prompts/build.js";
import { treeReadRefusal } from "../tools/gate/gate.js";
import type { LoadedPolicy } from "../tools/gate/policy.js";
import { maskSecrets } from "../tools/mcp/registry.js";
import { isTreeError } from "../tree/errors.js";
import { isSystemName, parseKey } from "../tree/path.js";
import type { Tree } from "../tree/types.js";
import { formatValue } from "../tree/value.js";

export const URI_PREFIX = "byteseek://tree/";

export const TREE_TEMPLATE: ListResourceTemplatesResult["resourceTemplates"][number] = {
  name: "tree",
  title: "A byteseek tree key",
  uriTemplate: `${URI_PREFIX}{+key}`,
  description:
    "Any key of the byteseek tree the run may read, without its leading '/': byteseek://tree/byteseek/memory/x. A directory ends with '/'.",
};

export function keyToUri(key: string): string {
  return URI_PREFIX + key.slice(1).split("/").map(encodeURIComponent).join("/");
}

/** The key a `byteseek://tree/…` URI names, or undefined when it names none. */
export function uriToKey(uri: string): string | undefined {
  if (!uri.startsWith(URI_PREFIX)) return undefined;
  try {
    return `/${uri
      .slice(URI_PREFIX.length)
      .split("/")
      .map((s) => decodeURIComponent(s))
      .join("/")}`;
  } catch {
    return undefined;
  }
}

/** Why run `vid` may not read `key` under `loaded` (an invalid policy lets nothing be read), or undefined. */
export function unreadable(key: string, loaded: LoadedPolicy, vid: string): string | undefined {
  if (!loaded.ok) return "the policy at /byteseek/policy is invalid";
  if (key.split("/").some((s) => isSystemName(s))) return `${key} is a system entry kept by byteseek`;
  return treeReadRefusal(key, loaded.policy, vid);
}

/** Whether run `vid` may read `key` under `loaded`. */
export function readable(key: string, loaded: LoadedPolicy, vid: string): boolean {
  return unreadable(key, loaded, vid) === undefined;
}

/**
 * Why `cursor` is not one `resources/list` gave (a child name of the memory folder, as the tree's
 * pages name them), or undefined when it is: a made-up cursor is the client's error (-32602), never
 * the server's.
 */
export function cursorProblem(cursor: unknown): string | undefined {
  if (cursor === undefined) return undefined;
  const bad = `the cursor ${JSON.stringify(cursor)?.slice(0, 80)} is not one byteseek gave; list again without a cursor and pass on the nextCursor of each page`;
  if (typeof cursor !== "string" || cursor === "" || cursor.slice(0, -1).includes("/")) return bad;
  try {
    parseKey(`${MEMORY_DIR}${cursor}`);
  } catch {
    return bad;
  }
  return undefined;
}

/** One page of memory entries run `vid` may read. */
export async function listMemory(
  tree: Tree,
  loaded: LoadedPolicy,
  vid: string,
  cursor: string | undefined,
): Promise<{ resources: Resource[]; nextCursor?: string }> {
  let page: Awaited<ReturnType<Tree["list"]>>;
  try {
    page = await tree.list(MEMORY_DIR, { limit: 200, ...(cursor ? { after: cursor } : {}) });
  } catch (err) {
    if (isTreeError(err, "TREE_NOT_FOUND")) return { resources: [] };
    throw err;
  }
  const resources: Resource[] = [];
  for (const c of page.children) {
    if (c.kind === "index") continue;
    const key = `${MEMORY_DIR}${c.name}`;
    if (!readable(key, loaded, vid)) continue;
    resources.push({
      uri: keyToUri(key),
      name: c.name,
      title: `memory: ${c.name}`,
      mimeType: c.kind === "json" ? "application/json" : "text/plain",
    });
  }
  return { resources, ...(page.next ? { nextCursor: page.next } : {}) };
}

/** The contents of a key: a value as text (json pretty-printed), a directory as its children's names. */
export async function readKey(
  tree: Tree,
  uri: string,
  key: string,
): Promise<ReadResourceResult["contents"] | undefined> {
  const node = await tree.get(key);
  if (!node) return undefined;
  if (node.kind === "index") {
    const page = await tree.list(key, { limit: 1000, values: false });
    const names = page.children.map((c) => c.name);
    if (page.next) names.push(`… (more after ${page.next})`);
    return [{ uri, mimeType: "text/plain", text: names.join("\n") }];
  }
  const text =
    node.kind === "json"
      ? JSON.stringify(maskSecrets(key, node.value.value), null, 2)
      : formatValue(node.value);
  return [{ uri, mimeType: node.kind === "json" ? "application/json" : "text/plain", text }];
}
