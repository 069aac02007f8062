import type { Logger } from "pino";
import { isTreeError } from "../tree/errors.js";
import type { Tree } from "../tree/types.js";
import { type Json, json } from "../tree/value.js";
import type { ToolKind } from "./errors.js";

/** The directory of a run's call records: `/byteseek/tool/<vid>/<n>`. */
export const recordsDir = (vid: string): string => `/byteseek/tool/${vid}/`;

/** What is stored for every call, failed ones included. `text` is exactly what the model saw. */
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
}

/** Above this, the arguments and details of a record are shortened (a huge `edit.write` text). */
const MAX_PART_BYTES = 64 * 1024;
const KEEP_STRING = 2048;

/**
 * Appends the record (read-only, owned by the run): dense, gapless numbering comes from the
 * tree's `append`. Returns the record key, or undefined if the store refused even a shortened
 * record (logged; the call's result still goes back to the caller).
 */
export async function writeRecord(
  tree: Tree,
  logger: Logger,
  vid: string,
  record: ToolRecord,
): Promise<string | undefined> {
  const value = storedRecord(record);
  try {
    return (await tree.append(recordsDir(vid), json(value as unknown as Json), { vid, ro: true })).key;
  } catch (err) {
    if (!isTreeError(err, "TREE_VALUE_TOO_LARGE")) {
      logger.error({ err, vid, tool: record.name }, "cannot record a tool call");
      return undefined;
    }
  }
  try {
    return (
      await tree.append(recordsDir(vid), json(smallRecord(value) as unknown as Json), { vid, ro: true })
    ).key;
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
