/**
 * The request shapes of the HTTP interface only the server reads (queries, path parameters, bodies
 * and streams); the wire shapes it shares with the client are tree/http's (schemas.ts there), and
 * the routes import those from tree/http/index.ts. These
 * schemas validate requests, type the handlers and generate `/openapi.json` and the docs page.
 */
import { z } from "zod";
import { GREP_DEFAULT_LIMIT, GREP_MAX_LIMIT, GREP_MAX_PATTERN } from "../tree/grep.js";
import { TxnJson as TxnWire } from "../tree/http/index.js";
import { MAX_TXN_OPS } from "../tree/index.js";

/** A transaction as the server documents it (the shape is the wire's, the limit the tree's). */
export const TxnJson = TxnWire.describe(
  `etcd's shape: if every compare holds run success, else failure; at most ${MAX_TXN_OPS} operations; unknown fields are refused`,
);

/** A query flag: `?x`, `?x=1`, `?x=true` → true; `?x=0`, `?x=false` → false. */
const Flag = z
  .enum(["", "0", "1", "true", "false"])
  .transform((v) => v === "" || v === "1" || v === "true")
  .optional();

export const TreeQuery = z.object({
  history: Flag.describe("GET of a value: its retained previous versions"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .describe("listing: at most this many children"),
  after: z.string().optional().describe("listing: start after this name (the `next` of the previous page)"),
  values: Flag.describe("listing: include values (default 1)"),
  system: Flag.describe("listing: include system entries (names starting with '‥')"),
  recursive: Flag.describe("listing: the whole subtree, depth-first"),
  depth: z.coerce.number().int().min(1).max(64).optional().describe("listing: the subtree down to N levels"),
  force: Flag.describe("PUT/DELETE: write or delete even a read-only key"),
  unchecked: Flag.describe(
    "PUT: store even a tool declaration, policy or MCP server entry that does not validate (refused with 400 TREE_INVALID_VALUE and the problems otherwise); kvspace tools --check reports it",
  ),
  node: Flag.describe("GET of a directory: the directory node itself (count, versions), not its children"),
  empty: Flag.describe(
    "DELETE of a directory: only if it is empty (409 TREE_NOT_EMPTY otherwise), not the whole subtree",
  ),
  consistency: z
    .enum(["local", "linearizable"])
    .optional()
    .describe(
      "GET of a value on etcd: `local` (default) may be answered from this server's cache (its own writes, others' within a watch delay); `linearizable` is a quorum read",
    ),
});
export type TreeQuery = z.infer<typeof TreeQuery>;

export const ExportQuery = z.object({
  secrets: Flag.describe(
    'write the secret fields of MCP registry entries (headers, env) as they are (without it, each value reads "***")',
  ),
});

export const GrepQuery = z.object({
  pattern: z
    .string()
    .min(1)
    .max(GREP_MAX_PATTERN)
    .describe("what to look for: plain text, or a regular expression with regex=1"),
  regex: Flag.describe("pattern is a JavaScript regular expression"),
  ignoreCase: Flag.describe("ignore case"),
  keys: Flag.describe("match keys (default 1)"),
  values: Flag.describe("match the lines of values (default 1)"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(GREP_MAX_LIMIT)
    .optional()
    .describe(`at most this many matches (default ${GREP_DEFAULT_LIMIT})`),
  after: z.string().optional().describe("go on after this key (the `next` of the previous answer)"),
});

export const ImportQuery = z.object({
  force: Flag.describe("overwrite read-only keys too (without it, 409 TREE_READ_ONLY naming the line)"),
  unchecked: Flag.describe(
    "store even tool declarations, a policy or MCP server entries that do not validate (without it, 400 TREE_INVALID_VALUE naming the line)",
  ),
});

export const PutBody = z
  .unknown()
  .describe(
    'either the typed form {"kind": "int64"|"float64"|"bool"|"char/utf8"|"json", "value": ..., "ro": false, "vid"?: owner} or any other JSON value, whose kind is inferred (integer → int64, other number → float64, boolean → bool, string → char/utf8, object/array → json)',
  );

/** The bare prefix (`/v1/tree`): the root. */
export const RootParams = z.object({});
export const TreeParams = z.object({
  "*": z
    .string()
    .describe(
      "the key without its leading '/': segments separated by a literal '/', each percent-encoded (UTF-8); a trailing '/' names a directory",
    ),
});

/**
 * The two URLs of a route that names a key or directory: `<prefix>/<key>`, and `<prefix>` alone
 * for the root (the same route, hidden from the docs), each with its path parameters' schema.
 */
export function keyRoutes(prefix: string) {
  return [
    { url: `${prefix}/*`, hide: false, params: TreeParams },
    { url: prefix, hide: true, params: RootParams },
  ];
}

export const WatchQuery = z.object({
  since: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe("replay the retained changes after this revision, then follow (Last-Event-ID wins)"),
});

export const WatchStream = z
  .string()
  .describe(
    "text/event-stream: `event: change` (id = revision, data = {rev, events}), `event: progress` (data = {rev}), `event: compacted` (data = the error; re-list, then watch from relistFrom)",
  );

export const NdjsonStream = z
  .string()
  .describe("application/x-ndjson: one {key, kind, value?, ro?, vid?} per line");
