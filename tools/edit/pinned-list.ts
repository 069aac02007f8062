import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { errnoOf, fsError } from "./fs-errors.js";
import { checkOpened, type OpenedBy, openedSync, swapped } from "./opened-path.js";
import { DIR_FLAGS } from "./regular-file.js";

const LIST_FLAGS = DIR_FLAGS | constants.O_NOFOLLOW;

/** Where to list an opened folder: through its descriptor where /proc has it, else its checked path. */
const listAt = (fd: number, real: string, by: OpenedBy) => (by === "proc" ? `/proc/self/fd/${fd}` : real);

/**
 * The entries of folder `real` (a real path the caller checked), read through the folder as opened:
 * a folder swapped for a symlink after the check is refused (`path_changed`), never listed, so
 * neither edit.ls nor a walk (edit.grep, edit.glob) shows names from outside the workspace.
 */
export async function listPinned(real: string, display: string): Promise<Dirent[]> {
  const fh = await open(real, LIST_FLAGS).catch((err: unknown) => {
    throw errnoOf(err) === "ELOOP" ? swapped(display) : fsError(err, display);
  });
  try {
    const by = await checkOpened(fh.fd, await fh.stat(), real, display);
    return await readdir(listAt(fh.fd, real, by), { withFileTypes: true });
  } catch (err) {
    throw fsError(err, display);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** listPinned for worker threads (synchronous); undefined for a folder that cannot be listed or was swapped. */
export function listPinnedSync(real: string): Dirent[] | undefined {
  let fd: number;
  try {
    fd = openSync(real, LIST_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const by = fstatSync(fd).isDirectory() ? openedSync(fd, real) : undefined;
    return by === undefined ? undefined : readdirSync(listAt(fd, real, by), { withFileTypes: true });
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
