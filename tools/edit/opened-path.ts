import { fstatSync, lstatSync, readlinkSync, realpathSync, type Stats } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import { ToolError } from "../errors.js";

/**
 * The check that binds a read to the path that was checked: the file tools resolve a path and check
 * it is inside the workspace, and a program may swap a symlink into it before the open. So after the
 * open, the descriptor itself is asked where it is — on Linux the kernel's answer,
 * `/proc/self/fd/<n>` — and it must be the real path that was checked; elsewhere the path must
 * still be real and name the same file (device and inode) as the descriptor. Nothing is read before.
 */
export function swapped(display: string): ToolError {
  return new ToolError(
    "path_changed",
    `${display} changed while it was being opened (a symlink was put in its path); nothing was read. Check the path (edit.ls) and try again.`,
    { details: { path: display } },
  );
}

/** How a descriptor was found to be the checked file: by /proc (its path then reaches it), or by its path. */
export type OpenedBy = "proc" | "path";

/** Throws `path_changed` unless descriptor `fd` (whose fstat is `opened`) is the file at real path `expected`. */
export async function checkOpened(
  fd: number,
  opened: Stats,
  expected: string,
  display: string,
): Promise<OpenedBy> {
  const at = await readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
  if (at !== undefined) {
    if (at !== expected) throw swapped(display);
    return "proc";
  }
  // no /proc: the path must still be real and name the opened file
  const [real, now] = await Promise.all([
    realpath(expected).catch(() => undefined),
    lstat(expected).catch(() => undefined),
  ]);
  if (real !== expected || !now || now.dev !== opened.dev || now.ino !== opened.ino) throw swapped(display);
  return "path";
}

/** checkOpened for worker threads (synchronous); undefined instead of throwing. */
export function openedSync(fd: number, expected: string): OpenedBy | undefined {
  let at: string | undefined;
  try {
    at = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // no /proc: fall through
  }
  if (at !== undefined) return at === expected ? "proc" : undefined;
  try {
    const opened = fstatSync(fd);
    const now = lstatSync(expected);
    const same = realpathSync(expected) === expected && now.dev === opened.dev && now.ino === opened.ino;
    return same ? "path" : undefined;
  } catch {
    return undefined;
  }
}
