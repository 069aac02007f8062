/**
 * Move and copy of a key or a whole directory, in one revision (a txn operation each, so every
 * engine and every layer over the tree — the checked tree, the HTTP client — carries them as it
 * carries the other operations). The rules, which tree/plan.ts applies:
 *
 * - A value moves to a value, a directory to a directory; not the root, not onto itself, not into
 *   itself (`/a/` → `/a/b/`) nor over what holds it (`/a/b/` → `/a/`): TREE_INVALID_KEY.
 * - A key naming a system entry (a `‥…` segment: byteseek's bookkeeping, hidden from listings) is
 *   neither moved nor a target: TREE_HIDDEN. A directory's own system entries go with it.
 * - A target that exists is replaced only with `overwrite` (TREE_EXISTS otherwise); it then ends up
 *   exactly as the source was: target keys the source lacks are deleted.
 * - Read-only keys stay where they are: a move of a directory holding one, or an overwrite of a
 *   target holding one, is refused (TREE_READ_ONLY) unless forced. A copy of a read-only key is
 *   allowed and is read-only too.
 * - Versions are those of an etcd transaction that puts the targets and deletes the sources: a key
 *   written over an existing one goes on from its version (and keeps its createRev and its own
 *   history), a new one starts at 1 (createRev: this revision); a moved key's source is deleted as
 *   `del`/`deltree` deletes it, so its last version stays in the history of its old key (restorable
 *   there), and its new key starts a history of its own. Owners (`vid`) go with the values unless
 *   the operation names one (`vid`) or clears them (`disown`).
 * - At most MAX_TRANSFER_KEYS nodes move in one revision (TREE_TOO_LARGE past it: move the
 *   subdirectories one by one). On etcd one write is also one etcd transaction, so the bound there
 *   is etcd's `--max-txn-ops` (about one operation a key): the refusal says so.
 */
import { TreeError } from "./errors.js";
import { isVisibleKey, parseKey } from "./path.js";
import type { TransferOptions, TransferResult, Tree } from "./types.js";

/** Most nodes (values and directories) one move or copy writes in one revision. */
export const MAX_TRANSFER_KEYS = 250_000;

/** Refuses a move or copy whose keys cannot be one (see the top of this file). */
export function checkTransfer(from: string, to: string): void {
  const a = parseKey(from);
  const b = parseKey(to);
  if (a.dir !== b.dir)
    throw new TreeError(
      "TREE_INVALID_KEY",
      `${from} and ${to} are not both directories: a directory (ending in /) moves to a directory, a value to a value`,
      { key: from, to },
    );
  if (from === "/" || to === "/")
    throw new TreeError(
      "TREE_INVALID_KEY",
      "the root cannot be moved, copied or replaced; name a directory below it",
      {
        key: from,
        to,
      },
    );
  if (from === to)
    throw new TreeError(
      "TREE_INVALID_KEY",
      `${from} is both the source and the target; name another target`,
      {
        key: from,
        to,
      },
    );
  if (a.dir && (to.startsWith(from) || from.startsWith(to)))
    throw new TreeError(
      "TREE_INVALID_KEY",
      to.startsWith(from)
        ? `${to} is inside ${from}: a directory cannot be moved or copied into itself`
        : `${from} is inside ${to}: a directory cannot replace the directory holding it`,
      { key: from, to },
    );
  for (const key of [from, to])
    if (!isVisibleKey(key))
      throw new TreeError(
        "TREE_HIDDEN",
        `${key} names a system entry (a ‥ name: byteseek's own bookkeeping), which is neither moved, copied nor replaced`,
        { key },
      );
}

export function transferTooLarge(key: string, count: number): TreeError {
  return new TreeError(
    "TREE_TOO_LARGE",
    `${key} holds over ${MAX_TRANSFER_KEYS} keys (${count} counted so far), more than one revision moves; move or copy its subdirectories one by one`,
    { key, limit: MAX_TRANSFER_KEYS },
  );
}

/** Moves `from` (a value or a directory) to `to` in one revision. */
export async function move(
  tree: Tree,
  from: string,
  to: string,
  options: TransferOptions = {},
): Promise<TransferResult> {
  const res = await tree.txn({ success: [{ op: "move", key: from, to, ...options }] });
  return res.results[0] as TransferResult;
}

/** Copies `from` (a value or a directory) to `to` in one revision. */
export async function copy(
  tree: Tree,
  from: string,
  to: string,
  options: TransferOptions = {},
): Promise<TransferResult> {
  const res = await tree.txn({ success: [{ op: "copy", key: from, to, ...options }] });
  return res.results[0] as TransferResult;
}
