import { closeSync, constants, fstatSync, openSync, type Stats } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { ToolError } from "../errors.js";
import { errnoOf, fsError } from "./fs-errors.js";
import { checkOpened, openedSync, swapped } from "./opened-path.js";

/**
 * Files are opened only once they are known to be regular: an open() of a FIFO waits for a writer,
 * holding one of libuv's four pool threads (four such reads stall every store write). So paths are
 * stat()ed first (which never opens), and opened with O_NONBLOCK — harmless for a regular file, and
 * it keeps a FIFO swapped in after the stat from blocking — then checked again on the handle.
 * The path is a real path the caller checked: a symlink there now was swapped in since, so it is
 * neither stat()ed through nor opened (O_NOFOLLOW), and the opened file must be the one at that
 * path (opened-path.ts) — a folder above it swapped for a symlink is caught there.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** What a stat says a non-regular, non-directory file is, for messages. */
export function specialKind(st: Stats): string | undefined {
  // a symlink (seen by lstat, as rename does) is moved, never opened
  if (st.isFile() || st.isDirectory() || st.isSymbolicLink()) return undefined;
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/** The `not_regular_file` refusal, written for the model. */
export function notRegular(display: string, what: string): ToolError {
  return new ToolError(
    "not_regular_file",
    `${display} is ${what}, not a regular file; the file tools only read and write regular files. Leave it alone or ask the user.`,
    { details: { path: display, type: what } },
  );
}

/** Refuses a FIFO, socket or device (directories are the caller's to judge). */
export function checkNotSpecial(st: Stats, display: string): void {
  const what = specialKind(st);
  if (what) throw notRegular(display, what);
}

/**
 * Opens `real` (a real path the caller checked) for reading when it is a regular file: lstat first
 * (no open), refuse anything else (`is_directory`, `not_regular_file`, `path_changed` for a symlink),
 * then open non-blocking without following a link, and check the handle is that file, regular.
 */
export async function openRegularFile(
  real: string,
  display: string,
  onDirectory?: () => ToolError,
): Promise<{ fh: FileHandle; stats: Stats }> {
  const st = await lstat(real).catch((err: unknown) => {
    throw fsError(err, display);
  });
  if (st.isSymbolicLink()) throw swapped(display);
  if (st.isDirectory())
    throw (
      onDirectory?.() ??
      new ToolError("is_directory", `${display} is a directory, not a file. Name a file inside it.`, {
        details: { path: display },
      })
    );
  checkNotSpecial(st, display);
  const fh = await open(real, READ_FLAGS).catch((err: unknown) => {
    throw errnoOf(err) === "ELOOP" ? swapped(display) : fsError(err, display);
  });
  try {
    const now = await fh.stat();
    await checkOpened(fh.fd, now, real, display);
    if (!now.isFile()) throw notRegular(display, specialKind(now) ?? "not a regular file");
    return { fh, stats: now };
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw fsError(err, display);
  }
}

/** Reads a whole regular file (see openRegularFile). */
export async function readRegularFile(real: string, display: string, signal?: AbortSignal): Promise<Buffer> {
  const { fh } = await openRegularFile(real, display);
  try {
    return await fh.readFile(signal ? { signal } : {});
  } catch (err) {
    throw fsError(err, display);
  } finally {
    await fh.close();
  }
}

/**
 * openSync for a worker thread: non-blocking, no link followed, only a regular file and only the one
 * at real path `file` (else undefined, nothing left open).
 */
export function openRegularSync(file: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(file, READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    if (fstatSync(fd).isFile() && openedSync(fd, file) !== undefined) return fd;
  } catch {
    // fall through
  }
  closeSync(fd);
  return undefined;
}

/** Flags for opening a directory (to fsync it) that never block on a FIFO put in its place. */
export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK;
