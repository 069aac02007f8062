import type { Logger } from "pino";
import { z } from "zod";
import { isTreeError } from "../../tree/errors.js";
import type { Tree, TreeNode } from "../../tree/types.js";
import { type Json, json } from "../../tree/value.js";
import { type FileIntent, type KeyIntent, SIDE_EFFECTS, type SideEffect } from "../call/intent.js";
import type { ToolKind } from "../errors.js";

/** The directory of a run's call records: `/byteseek/tool/<vid>/<n>`. */
export const recordsDir = (vid: string): string => `/byteseek/tool/${vid}/`;

/**
 * What is stored for every call, failed ones included. `text` is exactly what the model saw.
 * A call that executes is recorded twice at one key: `state: "started"` before it runs (args,
 * declaration pin, gate rule, idempotency key, side effect, file hashes; kind `runtime`, code
 * `started`, so a reader that ignores `state` sees an unfinished call), then `state: "done"` with
 * its result. A call refused before it runs is recorded once, `done`. Records written before
 * durable runs carry no `state`: they are done. docs/TOOLS.md "Call records" is the reference.
 */
export interface ToolRecord {
  name: string;
  args: unknown;
  kind: ToolKind;
  isError: boolean;
  text: string;
  details: Record<string, unknown>;
  /** Milliseconds since the epoch when the call arrived. */
  ts: number;
  /** Duration of the call up to its result, in milliseconds. */
  ms: number;
  /** The declaration the call ran: its key, the revision read, and the sha-256 of its canonical JSON. */
  decl?: { key: string; modRev: number; hash: string };
  /** Who wrote that declaration: a run id, or "person". */
  writer?: string;
  /** The policy rule (or grant) that allowed or refused the call. */
  gate?: { rule: string };
  /** The approval entry that let the call run, when one did. */
  approval?: string;
  /** The tool asked the loop to end the run after this result (a replay ends it there too). */
  terminate?: boolean;
  /** `started`: the call began and has no result yet; `done` (or absent): the result is in. */
  state?: RecordState;
  /** `<vid>/<n>` of this record: sent by http impls as Idempotency-Key, kept when a resumed run retries. */
  idempotencyKey?: string;
  /** What running the call again would do (tools/call/intent.ts), decided when it started. */
  sideEffect?: SideEffect;
  /** Edit-family calls: per file, the content hash before and as intended after. */
  files?: FileIntent[];
  /** Tree writes (`tree.set`, `tree.del`): per key, its version and value hash before and the hash intended after. */
  keys?: KeyIntent[];
  /** The model's tool call this record answers: the session message number and the call's id. */
  origin?: CallOrigin;
}

export type RecordState = "started" | "done";

/** Where a call came from in a run's session: `/byteseek/session/<vid>/<message>`, tool call `id`. */
export interface CallOrigin {
  message: number;
  id: string;
}

/** A record as read back: the fields a reader relies on, checked; anything else kept as it is. */
export const StoredRecord = z
  .object({
    name: z.string(),
    args: z.unknown(),
    kind: z.enum(["ok", "truncated", "vet", "arg", "denied", "runtime"]),
    isError: z.boolean(),
    text: z.string(),
    details: z.record(z.string(), z.unknown()),
    ts: z.number(),
    ms: z.number(),
    state: z.enum(["started", "done"]).optional(),
    idempotencyKey: z.string().optional(),
    sideEffect: z.enum(SIDE_EFFECTS).optional(),
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
    origin: z.object({ message: z.number().int().nonnegative(), id: z.string() }).optional(),
  })
  .passthrough();
export type StoredRecord = z.infer<typeof StoredRecord>;

/** The record a node holds, or undefined when it holds none (absent, not JSON, not a record). */
export function readRecord(node: TreeNode | undefined): StoredRecord | undefined {
  if (node?.kind !== "json") return undefined;
  const parsed = StoredRecord.safeParse(node.value.value);
  return parsed.success ? parsed.data : undefined;
}

/** `<vid>/<n>` of a record key `/byteseek/tool/<vid>/<n>`. */
export function idempotencyKeyOf(recordKey: string): string {
  return recordKey.slice("/byteseek/tool/".length);
}

/** What a `started` record says while its call runs (and forever, if its process dies during it). */
export const STARTED_TEXT =
  "the call started and its result is not recorded yet (if this stays, the process stopped during the call)";

/** Above this, the arguments and details of a record are shortened (a huge `edit.write` text). */
const MAX_PART_BYTES = 64 * 1024;
const KEEP_STRING = 2048;

/**
 * Appends the record (read-only, owned by the run): dense, gapless numbering comes from the
 * tree's `append`; with `at`, the record replaces the one there (a started call's result). Returns the record key, or undefined if the store refused even a shortened
 * record (logged; the call's result still goes back to the caller).
 */
export async function writeRecord(
  tree: Tree,
  logger: Logger,
  vid: string,
  record: ToolRecord,
  at?: string,
): Promise<string | undefined> {
  const value = storedRecord(record);
  const put = (v: ToolRecord) =>
    at === undefined
      ? tree.append(recordsDir(vid), json(v as unknown as Json), { vid, ro: true })
      : tree.set(at, json(v as unknown as Json), { vid, ro: true, force: true });
  try {
    return (await put(value)).key;
  } catch (err) {
    if (!isTreeError(err, "TREE_VALUE_TOO_LARGE")) {
      logger.error({ err, vid, tool: record.name }, "cannot record a tool call");
      return undefined;
    }
  }
  try {
    return (await put(smallRecord(value))).key;
  } catch (err) {
    logger.error({ err, vid, tool: record.name }, "cannot record a tool call");
    return undefined;
  }
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
