/**
 * Every request and response shape of the HTTP interface, declared once with zod. These schemas
 * validate requests, type the handlers and generate `/openapi.json` and the docs page.
 */
import { z } from "zod";
import { MAX_TXN_OPS } from "../tree/txn.js";
import { VALUE_KINDS } from "../tree/value.js";

export const ValueKind = z.enum(VALUE_KINDS).describe("the kind of a value");
export const NodeKind = z
  .enum([...VALUE_KINDS, "index"])
  .describe("a value's kind, or `index` for a directory");

/** A value in its JSON form: int64 as a number when safe, else a decimal string; float64 NaN/±Infinity as strings. */
export const JsonValue = z
  .unknown()
  .describe("the value in its JSON form (int64 beyond 2^53 as a decimal string)");

export const NodeJson = z
  .object({
    key: z.string(),
    kind: NodeKind,
    value: JsonValue.optional().describe(
      "a value node's value (absent for directories, with ?values=0, and in a listing for a value over 64 KiB: see preview)",
    ),
    preview: z
      .string()
      .optional()
      .describe(
        "in a listing, instead of a value over 64 KiB: its first 1024 characters (GET the key for all of it)",
      ),
    size: z.number().int().optional().describe("with preview: the value's size in bytes"),
    count: z.number().int().optional().describe("a directory's number of direct children"),
    version: z.number().int().describe("per key, from 1; also the ETag"),
    createRev: z.number().int(),
    modRev: z.number().int(),
    mtime: z.number().describe("milliseconds since the epoch of the last write"),
    ro: z.boolean(),
    vid: z.string().optional().describe("the run that wrote it"),
  })
  .describe("a node");
export type NodeJson = z.infer<typeof NodeJson>;

export const ChildJson = NodeJson.extend({
  name: z.string().describe("relative to the listed directory; directories end with '/'"),
});

export const ListJson = z.object({
  key: z.string(),
  children: z.array(ChildJson),
  next: z.string().optional().describe("pass as `after` for the next page; absent on the last page"),
});
export type ListJson = z.infer<typeof ListJson>;

export const HistoryJson = z.object({
  kind: ValueKind,
  value: JsonValue,
  version: z.number().int(),
  modRev: z.number().int(),
  mtime: z.number(),
  deleted: z.boolean().optional().describe("the value as it was when it was deleted"),
});
export type HistoryJson = z.infer<typeof HistoryJson>;

export const HistoryListJson = z.object({
  key: z.string(),
  history: z.array(HistoryJson).describe("newest first"),
});

export const WriteJson = z.object({
  key: z.string(),
  rev: z.number().int().describe("the global revision after the write"),
  version: z.number().int().describe("the key's new version (0 when deleted)"),
});
export const DeleteJson = WriteJson.extend({
  deleted: z.boolean().optional().describe("false when there was nothing to delete"),
  removed: z.number().int().optional().describe("deltree: how many keys were removed"),
});

export const ErrorJson = z
  .object({
    error: z
      .object({ code: z.string(), message: z.string() })
      .catchall(z.unknown())
      .describe("code, a message saying what is wrong, and details (e.g. `current` on a version mismatch)"),
  })
  .describe("an error");

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

export const ImportQuery = z.object({
  force: Flag.describe("overwrite read-only keys too (without it, 409 TREE_READ_ONLY naming the line)"),
});

export const PutBody = z
  .unknown()
  .describe(
    'either the typed form {"kind": "int64"|"float64"|"bool"|"char/utf8"|"json", "value": ..., "ro": false, "vid"?: owner} or any other JSON value, whose kind is inferred (integer → int64, other number → float64, boolean → bool, string → char/utf8, object/array → json)',
  );

/** The bare prefix (`/v1/tree`): the root. */
export const RootParams = z.object({});
export const TreeParams = z.object({ "*": z.string().describe("the key, percent-encoded per segment") });

const TxnTarget = z.enum(["version", "createRev", "modRev", "value", "exists"]);

export const TxnCompareJson = z.object({
  key: z.string(),
  target: TxnTarget,
  op: z.enum(["==", "!=", "<", ">"]).optional(),
  kind: ValueKind.optional().describe("target value: the kind of `value` (inferred when absent)"),
  value: JsonValue.describe("a number (version, createRev, modRev), a boolean (exists) or a value"),
});
export type TxnCompareJson = z.infer<typeof TxnCompareJson>;

export const TxnOpJson = z.discriminatedUnion("op", [
  z.object({
    op: z.literal("set"),
    key: z.string(),
    kind: ValueKind.optional().describe("the kind of `value` (inferred when absent)"),
    value: JsonValue,
    ro: z.boolean().optional(),
    force: z.boolean().optional(),
    vid: z.string().optional(),
  }),
  z.object({ op: z.literal("del"), key: z.string(), force: z.boolean().optional() }),
  z.object({ op: z.literal("deltree"), key: z.string(), force: z.boolean().optional() }),
  z.object({ op: z.literal("mkindex"), key: z.string() }),
  z.object({ op: z.literal("get"), key: z.string() }),
]);
export type TxnOpJson = z.infer<typeof TxnOpJson>;

export const TxnJson = z
  .object({
    compare: z.array(TxnCompareJson).optional(),
    success: z.array(TxnOpJson).optional(),
    failure: z.array(TxnOpJson).optional(),
  })
  .describe(
    `etcd's shape: if every compare holds run success, else failure; at most ${MAX_TXN_OPS} operations`,
  );
export type TxnJson = z.infer<typeof TxnJson>;

export const TxnResultJson = z.object({
  succeeded: z.boolean(),
  rev: z.number().int(),
  results: z
    .array(z.union([WriteJson, NodeJson, z.null()]))
    .describe("one per operation run; a get's node or null"),
});
export type TxnResultJson = z.infer<typeof TxnResultJson>;

export const WatchEventJson = z.object({
  type: z.enum(["put", "delete", "deltree"]),
  key: z.string(),
  kind: NodeKind.optional(),
  value: JsonValue.optional(),
  rev: z.number().int(),
  prevRev: z.number().int(),
  version: z.number().int().optional(),
});
export type WatchEventJson = z.infer<typeof WatchEventJson>;

export const WatchBatchJson = z.object({ rev: z.number().int(), events: z.array(WatchEventJson) });
export type WatchBatchJson = z.infer<typeof WatchBatchJson>;

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

export const ImportResultJson = z.object({ imported: z.number().int(), rev: z.number().int() });

export const NdjsonStream = z
  .string()
  .describe("application/x-ndjson: one {key, kind, value?, ro?, vid?} per line");

export const HealthJson = z.object({
  ok: z.boolean(),
  rev: z.number().int(),
  compactedRev: z.number().int(),
});
