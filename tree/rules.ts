/**
 * The judgements every storage engine makes the same way before a write, and the errors they
 * answer: the write rules (plan.ts), which both engines plan their writes through, ask these, so
 * a refusal reads the same whichever store refused it.
 */
import { TreeError } from "./errors.js";
import type { DelOptions, ListOptions, SetOptions, TreeNode } from "./types.js";
import { checkValue, type TreeValue, valueSize } from "./value.js";

/** What a judgement needs of a stored node record (both engines' records have these fields). */
export interface Prior {
  ver: number;
  ro?: 1;
  /** Directories: the number of direct children. */
  n?: number;
}

/** The node as the caller would answer it, for the details of a version mismatch. */
type Current = () => TreeNode | undefined;

export function checkValueSize(value: TreeValue, maxValueBytes: number): void {
  checkValue(value);
  const size = valueSize(value);
  if (size > maxValueBytes)
    throw new TreeError(
      "TREE_VALUE_TOO_LARGE",
      `value is ${size} bytes, over the limit of ${maxValueBytes} bytes; store it in smaller pieces`,
      { size, limit: maxValueBytes },
    );
}

function checkVersion(
  key: string,
  want: number | undefined,
  prev: Prior | undefined,
  current: Current,
): void {
  if (want === undefined || (prev?.ver ?? 0) === want) return;
  const have = prev ? prev.ver : 0;
  throw new TreeError(
    "TREE_VERSION_MISMATCH",
    `version mismatch on ${key}: expected ${want}, found ${have} (${prev ? "it was changed" : "it does not exist"}); read it again and retry`,
    { key, expected: want, actual: have, current: prev ? current() : undefined },
  );
}

/** A set of `key` over `prev` (undefined: absent): its version condition, create-only, read-only. */
export function judgeSet(key: string, prev: Prior | undefined, o: SetOptions, current: Current): void {
  checkVersion(key, o.ifVersion, prev, current);
  if (o.create && prev)
    throw new TreeError("TREE_EXISTS", `${key} already exists (create-only write)`, { key });
  if (prev?.ro && !o.force)
    throw new TreeError("TREE_READ_ONLY", `${key} is read-only; force the write or mark it writable first`, {
      key,
    });
}

/**
 * A del of `key` over `prev`: false when there is nothing to delete (and no condition says
 * otherwise); refuses a read-only key, the root, and a directory with children.
 */
export function judgeDel(key: string, prev: Prior | undefined, o: DelOptions, current: Current): boolean {
  checkVersion(key, o.ifVersion, prev, current);
  if (!prev) return false;
  if (prev.ro && !o.force)
    throw new TreeError("TREE_READ_ONLY", `${key} is read-only; force the delete or mark it writable first`, {
      key,
    });
  if (key === "/")
    throw new TreeError("TREE_NOT_EMPTY", "the root cannot be deleted; use clear to empty the store");
  const n = prev.n ?? 0;
  if (key.endsWith("/") && n > 0)
    throw new TreeError("TREE_NOT_EMPTY", `${key} is not empty (${n} children); use deltree to remove it`, {
      key,
      count: n,
    });
  return true;
}

/** A deltree of `dir` over `prev`: false when there is nothing to remove (an absent root still is emptied). */
export function judgeDeltree(
  dir: string,
  prev: Prior | undefined,
  o: { force?: boolean; ifVersion?: number },
  current: Current,
): boolean {
  checkVersion(dir, o.ifVersion, prev, current);
  if (!prev && dir !== "/") return false;
  if (prev?.ro && !o.force)
    throw new TreeError("TREE_READ_ONLY", `${dir} is read-only; force the delete`, { key: dir });
  return true;
}

/** A deltree without force found a read-only key below `dir`. */
export function readOnlyBelow(key: string, dir: string): TreeError {
  return new TreeError(
    "TREE_READ_ONLY",
    `${key} is read-only, so ${dir} cannot be removed; force the deltree or mark it writable first`,
    { key },
  );
}

export function notADirectory(key: string): TreeError {
  return new TreeError("TREE_NOT_A_DIRECTORY", `${key} is not a directory`);
}

/** The page size a listing asks for (default 1000, at most 100000); TREE_INVALID_VALUE when it is not a positive integer. */
export function listLimit(o: ListOptions): number {
  if (o.limit !== undefined && !(Number.isInteger(o.limit) && o.limit > 0))
    throw new TreeError("TREE_INVALID_VALUE", `limit must be a positive integer, got ${String(o.limit)}`, {
      limit: o.limit,
    });
  return Math.min(o.limit ?? 1000, 100_000);
}

/** The root of a store never written: it exists, empty. */
export function emptyRoot(): TreeNode {
  return { key: "/", kind: "index", count: 0, version: 0, createRev: 0, modRev: 0, mtime: 0, ro: false };
}
