import { type FileHandle, open, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../errors.js";
import { fsError } from "./fs-errors.js";
import { DIR_FLAGS } from "./regular-file.js";

/**
 * A folder held open while a file is written into it. Its paths go through `/proc/self/fd/<n>`,
 * which the kernel resolves to the folder opened — not to whatever its path names by then — so a
 * folder swapped for a symlink between the workspace check and the rename cannot send the file
 * elsewhere (Node has no openat/renameat; this is the same thing). Without /proc, paths are used as
 * they are and the folder's real path is checked again just before the rename.
 */
export interface PinnedDir {
  /** The path of `name` inside the pinned folder. */
  join(name: string): string;
  /** Refuses (`path_changed`) if the folder no longer is `expected` (moved, or its path re-pointed). */
  check(): Promise<void>;
  /** fsync of the folder (the rename is durable), best effort. */
  sync(): Promise<void>;
  close(): Promise<void>;
}

function moved(display: string, expected: string, now: string): ToolError {
  return new ToolError(
    "path_changed",
    `The folder of ${display} changed while it was being written (${expected} now resolves to ${now}); nothing was written. Check the path (edit.ls) and try again.`,
    { details: { path: display, expected, now } },
  );
}

/** Opens (pins) the folder `dir` — a real path the caller checked — and verifies it is still that folder. */
export async function pinDir(dir: string, display: string): Promise<PinnedDir> {
  let dh: FileHandle;
  try {
    dh = await open(dir, DIR_FLAGS);
  } catch (err) {
    throw fsError(err, display);
  }
  const link = `/proc/self/fd/${dh.fd}`;
  const pinned = await readlink(link).catch(() => undefined);
  const base = pinned === undefined ? dir : link;
  async function check(): Promise<void> {
    const now = pinned === undefined ? await realpath(dir).catch(() => "(gone)") : await readlink(link);
    if (now !== dir) throw moved(display, dir, now);
  }
  try {
    await check();
  } catch (err) {
    await dh.close().catch(() => undefined);
    throw err;
  }
  return {
    join: (name) => path.join(base, name),
    check,
    sync: () => dh.sync().catch(() => undefined),
    close: () => dh.close().catch(() => undefined),
  };
}
