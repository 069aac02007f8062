/**
 * The HTTP wire format of the tree, declared once with zod: the server validates and documents
 * with these schemas, the HTTP client (./client.ts) reads its answers with their types, and the
 * web page imports the types (this file depends on nothing Node-only, so web/tsconfig reaches it).
 */
import { z } from "zod";
import { VALUE_KINDS } from "../kinds.js";

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
    key: z.string().describe("the node's key; a directory's ends with '/'"),
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
    createRev: z.number().int().describe("the revision that created the key"),
    modRev: z.number().int().describe("the revision of the key's last write"),
    mtime: z.number().describe("milliseconds since the epoch of the last write"),
    ro: z.boolean().describe("read-only: writes and deletes need force"),
    vid: z.string().optional().describe("the run that wrote it"),
  })
  .describe("a node");
export type NodeJson = z.infer<typeof NodeJson>;

export const ChildJson = NodeJson.extend({
  name: z.string().describe("relative to the listed directory; directories end with '/'"),
});
export type ChildJson = z.infer<typeof ChildJson>;

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
export type HistoryListJson = z.infer<typeof HistoryListJson>;

export const WriteJson = z.object({
  key: z.string(),
  rev: z.number().int().describe("the global revision after the write"),
  version: z.number().int().describe("the key's new version (0 when deleted)"),
});
export type WriteJson = z.infer<typeof WriteJson>;

export const DeleteJson = WriteJson.extend({
  deleted: z.boolean().optional().describe("false when there was nothing to delete"),
  removed: z.number().int().optional().describe("deltree: how many keys were removed"),
  keys: z.number().int().optional().describe("move, copy: how many keys landed at the target"),
});
export type DeleteJson = z.infer<typeof DeleteJson>;

export const ErrorJson = z
  .object({
    error: z
      .object({ code: z.string(), message: z.string() })
      .catchall(z.unknown())
      .describe("code, a message saying what is wrong, and details (e.g. `current` on a version mismatch)"),
  })
  .describe("an error");
export type ErrorJson = z.infer<typeof ErrorJson>;

/** Compare targets: ours, and etcd's names for the same fields. */
const TxnTarget = z.enum([
  "version",
  "createRev",
  "modRev",
  "value",
  "exists",
  "VERSION",
  "CREATE",
  "MOD",
  "VALUE",
]);
/** etcd's `result` names for the compare operators. */
export const ETCD_RESULTS = { EQUAL: "==", NOT_EQUAL: "!=", LESS: "<", GREATER: ">" } as const;
export const ETCD_TARGETS = {
  VERSION: "version",
  CREATE: "createRev",
  MOD: "modRev",
  VALUE: "value",
} as const;

export const TxnCompareJson = z.strictObject({
  key: z.string(),
  target: TxnTarget.describe("what to compare; etcd's VERSION, CREATE, MOD and VALUE are accepted too"),
  op: z.enum(["==", "!=", "<", ">"]).optional().describe("default =="),
  result: z
    .enum(["EQUAL", "NOT_EQUAL", "LESS", "GREATER"])
    .optional()
    .describe("etcd's spelling of op (give one of the two)"),
  kind: ValueKind.optional().describe("target value: the kind of `value` (inferred when absent)"),
  value: JsonValue.describe("a number (version, createRev, modRev), a boolean (exists) or a value"),
});
export type TxnCompareJson = z.infer<typeof TxnCompareJson>;

/** A move or copy operation (tree/transfer.ts has the rules). */
function TransferOpJson<Op extends "move" | "copy">(op: Op) {
  return z.strictObject({
    op: z.literal(op),
    key: z.string().describe(`the value or directory to ${op}`),
    to: z.string().describe("where it lands: a value to a value, a directory (ending in /) to a directory"),
    overwrite: z.boolean().optional().describe("replace what is at `to` (else TREE_EXISTS)"),
    force: z.boolean().optional().describe("move read-only keys, replace read-only targets"),
    vid: z
      .string()
      .optional()
      .describe("the owner run of every key written (default: each keeps its source's)"),
    unchecked: z.boolean().optional().describe("store even declarations or a policy that do not validate"),
  });
}

/** A set's or del's own compare-and-set, as PUT's `?ifVersion`: unmet, the whole transaction fails with its error. */
const IfVersionJson = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe(
    "write only if the key's version is this (0: absent); else the transaction fails with TREE_VERSION_MISMATCH",
  );

export const TxnOpJson = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("set"),
    key: z.string(),
    kind: ValueKind.optional().describe("the kind of `value` (inferred when absent)"),
    value: JsonValue,
    ro: z.boolean().optional(),
    force: z.boolean().optional(),
    vid: z.string().optional(),
    unchecked: z
      .boolean()
      .optional()
      .describe("store even a declaration or policy that does not validate (see PUT ?unchecked)"),
    ifVersion: IfVersionJson,
  }),
  z.strictObject({
    op: z.literal("del"),
    key: z.string(),
    force: z.boolean().optional(),
    ifVersion: IfVersionJson,
  }),
  z.strictObject({ op: z.literal("deltree"), key: z.string(), force: z.boolean().optional() }),
  z.strictObject({ op: z.literal("mkindex"), key: z.string() }),
  z.strictObject({
    op: z.literal("append"),
    key: z.string().describe("the directory; the value becomes its next numbered child"),
    kind: ValueKind.optional().describe("the kind of `value` (inferred when absent)"),
    value: JsonValue,
    ro: z.boolean().optional(),
    vid: z.string().optional(),
  }),
  z.strictObject({ op: z.literal("get"), key: z.string() }),
  TransferOpJson("move"),
  TransferOpJson("copy"),
]);
export type TxnOpJson = z.infer<typeof TxnOpJson>;

export const TxnJson = z.strictObject({
  compare: z.array(TxnCompareJson).optional(),
  success: z.array(TxnOpJson).optional(),
  failure: z.array(TxnOpJson).optional(),
});
export type TxnJson = z.infer<typeof TxnJson>;

export const TxnResultJson = z.object({
  succeeded: z.boolean(),
  rev: z.number().int(),
  results: z
    .array(z.union([DeleteJson, NodeJson, z.null()]))
    .describe("one per operation run; a get's node or null"),
});
export type TxnResultJson = z.infer<typeof TxnResultJson>;

export const WatchEventJson = z.object({
  type: z
    .enum(["put", "delete", "deltree"])
    .describe("deltree: the key is a directory, removed with all under it"),
  key: z.string(),
  kind: NodeKind.optional().describe("put: the new node's kind"),
  value: JsonValue.optional().describe("put of a value: the new value"),
  rev: z.number().int().describe("the revision of the change"),
  prevRev: z.number().int().describe("the key's modRev before the change (0: it did not exist)"),
  version: z.number().int().optional().describe("put: the key's new version"),
});
export type WatchEventJson = z.infer<typeof WatchEventJson>;

export const WatchBatchJson = z.object({ rev: z.number().int(), events: z.array(WatchEventJson) });
export type WatchBatchJson = z.infer<typeof WatchBatchJson>;

export const WatchProgressJson = z.object({ rev: z.number().int() });
export type WatchProgressJson = z.infer<typeof WatchProgressJson>;

export const ImportResultJson = z.object({ imported: z.number().int(), rev: z.number().int() });
export type ImportResultJson = z.infer<typeof ImportResultJson>;

export const HealthJson = z.object({
  ok: z.boolean(),
  rev: z.number().int(),
  compactedRev: z.number().int(),
});
export type HealthJson = z.infer<typeof HealthJson>;

/** `POST /v1/move` and `POST /v1/copy` (tree/transfer.ts has the rules). */
export const MoveJson = z.strictObject({
  from: z.string().describe("the value or directory (ending in /) to move or copy"),
  to: z.string().describe("where it lands: a value to a value, a directory to a directory"),
  overwrite: z.boolean().optional().describe("replace what is at `to` (else 409 TREE_EXISTS)"),
  force: z
    .boolean()
    .optional()
    .describe("move read-only keys, replace read-only targets (else 403 TREE_READ_ONLY)"),
});
export type MoveJson = z.infer<typeof MoveJson>;

export const MoveResultJson = z.object({
  revision: z.number().int().describe("the one revision the whole move or copy landed in"),
  keys: z.number().int().describe("how many keys (values and directories) landed at the target"),
});
export type MoveResultJson = z.infer<typeof MoveResultJson>;

export const GrepMatchJson = z.object({
  key: z.string(),
  line: z
    .number()
    .int()
    .optional()
    .describe("the matching line of the value (from 1); absent: the key matched"),
  preview: z.string().describe("the matching line (or key), cut to about 160 characters around the match"),
});
export type GrepMatchJson = z.infer<typeof GrepMatchJson>;

export const GrepResultJson = z.object({
  matches: z
    .array(GrepMatchJson)
    .describe("in key order; a key's matches are never split between two answers"),
  next: z.string().optional().describe("where the search stopped: send it back as `after` to go on"),
  truncated: z
    .boolean()
    .optional()
    .describe("a budget (bytes read, time), not the limit, stopped the search"),
  scanned: z.object({ keys: z.number().int(), bytes: z.number().int() }).optional(),
});
export type GrepResultJson = z.infer<typeof GrepResultJson>;
