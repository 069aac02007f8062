import type { Logger } from "pino";
import { z } from "zod";
import { dirs, runDirs } from "../../shared/keys.js";
import { isTreeError } from "../../tree/errors.js";
import type { Tree, TreeNode, TxnOp } from "../../tree/types.js";
import type { TreeValue } from "../../tree/value.js";
import { SIDE_EFFECTS } from "../call/intent.js";
import { docFamily, docValue, parseDoc } from "../doc/read-write.js";

/** The directory of a run's call records: `/byteseek/tool/<vid>/<n>`. */
export const recordsDir = runDirs.records;

/**
 * What is stored for every call, failed ones included. `text` is exactly what the model saw.
 * A call that executes is recorded twice at one key: `state: "started"` before it runs (args,
 * declaration pin, gate rule, idempotency key, side effect, file hashes; kind `runtime`, code
 * `started`, so a reader that ignores `state` sees an unfinished call), then `state: "done"` with
 * its result. A call refused before it runs is recorded once, `done`. Records written before
 * durable runs carry no `state`: they are done. docs/TOOLS.md "Call records" is the reference.
 */
const ToolRecordFields = z.object({
  name: z.string(),
  args: z.unknown(),
  kind: z.enum(["ok", "truncated", "vet", "arg", "denied", "runtime"]),
  isError: z.boolean(),
  text: z.string(),
  details: z.record(z.string(), z.unknown()),
  /** Milliseconds since the epoch when the call arrived. */
  ts: z.number(),
  /** Duration of the call up to its result, in milliseconds. */
  ms: z.number(),
  /** The declaration the call ran: its key, the revision read, and the sha-256 of its canonical JSON. */
  decl: z.object({ key: z.string(), modRev: z.number(), hash: z.string() }).optional(),
  /** Who wrote that declaration: a run id, or "person". */
  writer: z.string().optional(),
  /** The policy rule (or grant) that allowed or refused the call. */
  gate: z.object({ rule: z.string() }).optional(),
  /** The approval entry that let the call run, when one did. */
  approval: z.string().optional(),
  /** The tool asked the loop to end the run after this result (a replay ends it there too). */
  terminate: z.boolean().optional(),
  /** `started`: the call began and has no result yet; `done` (or absent): the result is in. */
  state: z.enum(["started", "done"]).optional(),
  /** `<vid>/<n>` of this record: sent by http impls as Idempotency-Key, kept when a resumed run retries. */
  idempotencyKey: z.string().optional(),
  /** What running the call again would do (tools/call/intent.ts), decided when it started. */
  sideEffect: z.enum(SIDE_EFFECTS).optional(),
  /** Edit-family calls: per file, the content hash before and as intended after. */
  files: z
    .array(
      z.object({
        path: z.string(),
        before: z.string().nullable(),
        after: z.string().nullable(),
        planned: z.literal(false).optional(),
      }),
    )
    .optional(),
  /**
   * A tree write's started record committed in the same transaction as the call's write
   * (tools/call/intent-write.ts): it exists only if the write landed, so it needs no `keys`.
   */
  withWrite: z.literal(true).optional(),
  /** Tree writes (`tree.set`, `tree.del`) whose record was stored before the write: per key, its version and value hash before and the hash intended after. */
  keys: z
    .array(
      z.object({
        key: z.string(),
        version: z.number().int().nonnegative(),
        before: z.string().nullable(),
        after: z.string().nullable(),
      }),
    )
    .optional(),
  /** The model's tool call this record answers: the session message number and the call's id. */
  origin: z.object({ message: z.number().int().nonnegative(), id: z.string() }).optional(),
});
export type ToolRecord = z.infer<typeof ToolRecordFields>;

export type RecordState = NonNullable<ToolRecord["state"]>;

/** Where a call came from in a run's session: `/byteseek/session/<vid>/<message>`, tool call `id`. */
export type CallOrigin = NonNullable<ToolRecord["origin"]>;

/** A record as read back: the fields a reader relies on, checked; anything else kept as it is. */
export const StoredRecord = ToolRecordFields.loose();
export type StoredRecord = z.infer<typeof StoredRecord>;

/** The call record family (tools/doc/docs.ts names it): written and read back with `StoredRecord`. */
export const RecordDoc = docFamily("a call record", StoredRecord);

/**
 * The record a node holds, or undefined when there is none; a node that holds something else (not
 * json, or not a record) is `DOC_MALFORMED`: a reader deciding what to do with a run's calls must
 * not take a damaged record for a missing one.
 */
export function readRecord(
  key: string,
  node: (Pick<TreeNode, "kind"> & { value?: TreeValue | undefined }) | undefined,
): StoredRecord | undefined {
  return parseDoc(RecordDoc, key, node);
}

/** The run and number of a record key (`/byteseek/tool/<vid>/<n>`, nothing deeper), else undefined. */
export function recordKeyParts(key: string): { vid: string; n: number } | undefined {
  if (!key.startsWith(dirs.records)) return undefined;
  const m = /^([^/]+)\/(\d+)$/.exec(key.slice(dirs.records.length));
  return m ? { vid: m[1] as string, n: Number(m[2]) } : undefined;
}

/** `<vid>/<n>` of a record key `/byteseek/tool/<vid>/<n>`. */
export function idempotencyKeyOf(recordKey: string): string {
  return recordKey.slice(dirs.records.length);
}

/** What a `started` record says while its call runs (and forever, if its process dies during it). */
export const STARTED_TEXT =
  "the call started and its result is not recorded yet (if this stays, the process stopped during the call)";

/** Above this, the arguments and details of a record are shortened (a huge `edit.write` text). */
const MAX_PART_BYTES = 64 * 1024;
const KEEP_STRING = 2048;

/**
 * Appends the record (read-only, owned by the run): dense, gapless numbering comes from the
 * tree's `append`; with `at`, the record replaces the one there (a started call's result);
 * `deferSync`: the write needs no fsync of its own (SetOptions.deferSync). Returns the record key, or undefined if the store refused even a shortened
 * record (logged; the call's result still goes back to the caller).
 */
export async function writeRecord(
  tree: Tree,
  logger: Logger,
  vid: string,
  record: ToolRecord,
  at?: string,
  deferSync?: boolean,
): Promise<string | undefined> {
  const lazily = deferSync ? { deferSync } : {};
  const put = (small: boolean) => {
    const { op, key, value, ...options } = recordOp(vid, record, at, small);
    return op === "append"
      ? tree.append(key, value, { ...options, ...lazily })
      : tree.set(key, value, { ...options, ...lazily });
  };
  try {
    return (await put(false)).key;
  } catch (err) {
    if (!isTreeError(err, "TREE_VALUE_TOO_LARGE")) {
      logger.error({ err, vid, tool: record.name }, "cannot record a tool call");
      return undefined;
    }
  }
  try {
    return (await put(true)).key;
  } catch (err) {
    logger.error({ err, vid, tool: record.name }, "cannot record a tool call");
    return undefined;
  }
}

/**
 * The record's write as `writeRecord` makes it, as a transaction's operation: for a write that
 * carries its call's record (tools/call/intent-write.ts). `small`: the form stored when the record
 * is too large for the store.
 */
export function recordOp(
  vid: string,
  record: ToolRecord,
  at: string | undefined,
  small = false,
): Extract<TxnOp, { op: "append" | "set" }> {
  const stored = storedRecord(record);
  const value = docValue(RecordDoc, small ? smallRecord(stored) : stored);
  return at === undefined
    ? { op: "append", key: recordsDir(vid), value, vid, ro: true }
    : { op: "set", key: at, value, vid, ro: true, force: true };
}

/** The record as stored: its arguments and details shortened when large. */
export function storedRecord(record: ToolRecord): ToolRecord {
  return {
    ...record,
    args: shorten(record.args),
    details: shorten(record.details) as Record<string, unknown>,
  };
}

/** What is stored when even the shortened record is too large for the store. */
function smallRecord(value: ToolRecord): ToolRecord {
  return { ...value, args: { "‥omitted": "too large to record" }, details: { "‥omitted": true } };
}

/** Long strings inside a large JSON value are cut (with a marker) so a record stays small. */
export function shorten(value: unknown): unknown {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return { "‥omitted": "not JSON-serialisable" };
  }
  if (text === undefined) return null;
  if (text.length <= MAX_PART_BYTES) return JSON.parse(text) as unknown;
  return JSON.parse(text, function cut(_k, v: unknown) {
    if (typeof v === "string" && v.length > KEEP_STRING)
      return `${v.slice(0, KEEP_STRING)}[… ${v.length - KEEP_STRING} more characters not recorded]`;
    return v;
  }) as unknown;
}
