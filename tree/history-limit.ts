/**
 * How many previous versions a value keeps for history(): one count for the whole store, or counts
 * by directory, where the nearest configured directory above a value decides and values under no
 * configured directory keep none ("/" sets a count for the rest).
 *
 * The default keeps 10 under /byteseek/ (prompts and tool declarations: what history is for, a
 * rollback) but none of the runs' usage counters (rewritten by every call, their past versions
 * tell nothing the call records do not), and none elsewhere. Each kept version is a record written on every overwrite and
 * another deleted; for data overwritten all the time that costs about a third of write throughput
 * and triples the store (bench/RESULTS.md), so it is asked for where it is wanted, as object
 * stores ask for versioning per bucket.
 */
import { dirs } from "../shared/keys.js";
import { TreeError } from "./errors.js";
import { parseDirKey } from "./path.js";

/** A count for every value, or counts by directory key (`{"/byteseek/": 10, "/notes/": 3}`). */
export type HistoryLimit = number | Readonly<Record<string, number>>;

export const DEFAULT_HISTORY_LIMIT: HistoryLimit = { [dirs.byteseek]: 10, [dirs.usage]: 0 };

/** More than this many versions of one value is a mistake, not a policy. */
export const MAX_HISTORY = 10_000;

export interface HistoryRule {
  /** Previous versions kept for the value `key`. */
  limitFor(key: string): number;
  /** Whether any value at or below directory `dir` keeps history. */
  keepsBelow(dir: string): boolean;
}

/** Checks a history limit and answers its rule; an invalid one is refused with TREE_INVALID_OPTION. */
export function historyRule(limit: HistoryLimit = DEFAULT_HISTORY_LIMIT): HistoryRule {
  if (typeof limit === "number") {
    checkCount(limit, "the history limit");
    return { limitFor: () => limit, keepsBelow: () => limit > 0 };
  }
  // Longest first: the nearest configured directory above a key is the first that prefixes it.
  const dirs = Object.entries(limit)
    .map(([dir, count]): [string, number] => {
      try {
        parseDirKey(dir);
      } catch (err) {
        throw new TreeError(
          "TREE_INVALID_OPTION",
          `history limit: ${JSON.stringify(dir)} is not a directory key (${(err as Error).message})`,
          { dir },
        );
      }
      checkCount(count, `the history limit of ${dir}`);
      return [dir, count];
    })
    .sort((a, b) => b[0].length - a[0].length);
  const limitFor = (key: string): number => {
    for (const [dir, count] of dirs) if (key.startsWith(dir)) return count;
    return 0;
  };
  return {
    limitFor,
    keepsBelow: (dir) => limitFor(dir) > 0 || dirs.some(([d, count]) => count > 0 && d.startsWith(dir)),
  };
}

/**
 * Reads a history limit as written in configuration: a count (`10`) for every value, or
 * `dir=count` pairs separated by commas (`/byteseek/=10,/notes/=3`). `source` (an environment
 * variable's name) starts the message of a refusal, so the user knows which setting to mend.
 */
export function parseHistoryLimit(text: string, source?: string): HistoryLimit {
  try {
    return parseLimit(text);
  } catch (err) {
    if (source === undefined || !(err instanceof TreeError)) throw err;
    throw new TreeError(err.code, `${source}: ${err.message}`, err.details, err);
  }
}

function parseLimit(text: string): HistoryLimit {
  const trimmed = text.trim();
  if (/^[0-9]+$/.test(trimmed)) return checkCount(Number(trimmed), "the history limit");
  const out: Record<string, number> = {};
  for (const part of trimmed.split(",")) {
    const m = /^\s*(\/(?:[^=]*\/)?)\s*=\s*([0-9]+)\s*$/.exec(part);
    if (!m)
      throw new TreeError(
        "TREE_INVALID_OPTION",
        `history limit: ${JSON.stringify(part.trim())} is not a count nor dir/=count (e.g. 10, or /byteseek/=10,/notes/=3)`,
        { part },
      );
    out[m[1]!] = Number(m[2]);
  }
  historyRule(out); // refuses bad directories and counts now, with the part that is wrong
  return out;
}

function checkCount(count: number, what: string): number {
  if (!Number.isInteger(count) || count < 0 || count > MAX_HISTORY)
    throw new TreeError(
      "TREE_INVALID_OPTION",
      `${what} must be a whole number from 0 (keeps none) to ${MAX_HISTORY}, got ${count}`,
      { count },
    );
  return count;
}
