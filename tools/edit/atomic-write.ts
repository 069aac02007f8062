import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import { lstat, open, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { pidAlive } from "../../shared/process.js";
import { ToolError } from "../errors.js";
import { errnoOf, fsError } from "./fs-errors.js";
import { pinDir } from "./pinned-dir.js";
import { checkNotSpecial, openRegularFile } from "./regular-file.js";

/** Temp files are `.<name>.byteseek-tmp-<pid>-<hex>` beside their target; the sweep recognises them by this. */
export const TEMP_PATTERN = /^\..*\.byteseek-tmp-(\d+)-[0-9a-f]{12}$/;

export function tempNameFor(target: string): string {
  const base = path.basename(target);
  return path.join(
    path.dirname(target),
    `.${base}.byteseek-tmp-${process.pid}-${randomBytes(6).toString("hex")}`,
  );
}

export interface AtomicWriteOptions {
  /** Shown in messages instead of the real path. */
  display?: string;
  signal?: AbortSignal;
  /** Most bytes given to one write call, so an abort is noticed between calls. */
  chunkBytes?: number;
  /**
   * The target as it was read (its stats): the rename is refused, the file left as it is, when it
   * is no longer that file or was written since (another process editing it in the meantime).
   */
  unchangedSince?: FileStamp;
  /**
   * Awaited once the temp file is on disk, right before the checks and the rename (the write's
   * commit point): the call's started record (ToolContext.intentDurable). A rejection leaves the
   * target untouched and the temp removed.
   */
  beforeRename?: () => Promise<unknown>;
}

/** What tells a file's version apart: its inode, size and change times. */
export type FileStamp = Pick<Stats, "ino" | "size" | "mtimeMs" | "ctimeMs">;

const sameStamp = (a: FileStamp, b: FileStamp): boolean =>
  a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

const CHUNK = 16 * 1024 * 1024;
/** Read-back block: small enough to stay in cache while compared, and one allocation reused. */
const READ_BACK_BLOCK = 1024 * 1024;

/**
 * What must hold before `target` may be (over)written: not a directory, owner-write bit set. Answers the
 * existing file's stats (undefined when it does not exist). Refuses read-only files even when running as root.
 */
export async function checkWritable(target: string, display: string) {
  const st = await stat(target).catch((err: unknown) => {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw fsError(err, display);
  });
  if (st?.isDirectory()) {
    throw new ToolError("is_directory", `${display} is a directory; name a file.`, {
      details: { path: display },
    });
  }
  if (st) checkNotSpecial(st, display);
  if (st && (st.mode & 0o200) === 0) {
    throw new ToolError(
      "permission_denied",
      `${display} is read-only (mode ${(st.mode & 0o7777).toString(8)}). It is not changed; ask the user before making it writable.`,
      { details: { path: display, mode: st.mode & 0o7777 } },
    );
  }
  return st;
}

/** The pieces of `parts` covering bytes `[from, from + max)` of their concatenation (views, no copies). */
function slicesFrom(parts: readonly Uint8Array[], from: number, max: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let skip = from;
  let left = max;
  for (const p of parts) {
    if (left === 0) break;
    if (skip >= p.byteLength) {
      skip -= p.byteLength;
      continue;
    }
    const piece = p.subarray(skip, skip + Math.min(left, p.byteLength - skip));
    skip = 0;
    left -= piece.byteLength;
    if (piece.byteLength > 0) out.push(piece);
  }
  return out;
}

/**
 * Replaces `target` (a real path, not a symlink) with `data` atomically: a temp file in the same directory,
 * written, fsynced, given the old file's mode (and owner, when allowed), then (once `beforeRename` resolves)
 * renamed over the target and the directory fsynced. Readers see the old or the new content, never a mix; on any failure the temp is removed.
 * `data` may be given as parts (written with writev, never concatenated), so an edit of a large file writes
 * the unchanged stretches straight from the buffer they were read into.
 */
export async function writeFileAtomic(
  target: string,
  data: Uint8Array | readonly Uint8Array[],
  options: AtomicWriteOptions = {},
) {
  const display = options.display ?? target;
  const chunk = options.chunkBytes ?? CHUNK;
  const parts = data instanceof Uint8Array ? [data] : data;
  const total = parts.reduce((n, p) => n + p.byteLength, 0);
  const existing = await checkWritable(target, display);
  // the temp file and the rename go through the folder as opened and checked, whatever its path names later
  const dir = await pinDir(path.dirname(target), display);
  const temp = dir.join(path.basename(tempNameFor(target)));
  const final = dir.join(path.basename(target));
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(temp, "wx", existing ? existing.mode & 0o7777 : 0o666);
    for (let at = 0; at < total; ) {
      options.signal?.throwIfAborted();
      const { bytesWritten } = await fh.writev(slicesFrom(parts, at, Math.min(chunk, total - at)));
      at += bytesWritten;
    }
    await fh.sync();
    if (existing) {
      await fh.chmod(existing.mode & 0o7777);
      if (process.getuid?.() === 0) await fh.chown(existing.uid, existing.gid).catch(() => undefined);
    }
    await fh.close();
    fh = undefined;
    await options.beforeRename?.();
    options.signal?.throwIfAborted();
    await dir.check();
    const was = options.unchangedSince;
    if (was) {
      const now = await stat(final).catch(() => undefined);
      if (!now || !sameStamp(now, was))
        throw new ToolError(
          "file_changed",
          `${display} changed while this edit was being made (another program wrote it); it is left as that program wrote it. Read it again, then edit.`,
          { details: { path: display } },
        );
    }
    await rename(temp, final);
  } catch (err) {
    await fh?.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    await dir.close();
    if (options.signal?.aborted) {
      throw new ToolError(
        "aborted",
        `Writing ${display} was stopped before it finished; the file is unchanged.`,
        {
          details: { path: display },
          cause: err,
        },
      );
    }
    throw fsError(err, display);
  }
  await dir.sync();
  await dir.close();
}

/**
 * Does `file` hold exactly the concatenation of `parts`? Read in blocks into one buffer and compared piece by
 * piece, so checking a large file costs neither a second copy of it nor a concatenation.
 */
export async function contentEquals(file: string, parts: readonly Uint8Array[]): Promise<boolean> {
  const total = parts.reduce((n, p) => n + p.byteLength, 0);
  const { fh, stats } = await openRegularFile(file, file);
  try {
    if (stats.size !== total) return false;
    const block = Buffer.allocUnsafe(Math.min(READ_BACK_BLOCK, Math.max(total, 1)));
    for (let at = 0; at < total; ) {
      const { bytesRead } = await fh.read(block, 0, Math.min(block.length, total - at), at);
      if (bytesRead === 0) return false;
      let off = 0;
      for (const piece of slicesFrom(parts, at, bytesRead)) {
        if (Buffer.compare(block.subarray(off, off + piece.byteLength), piece) !== 0) return false;
        off += piece.byteLength;
      }
      at += bytesRead;
    }
    // nothing appended since the stat
    return (await fh.read(block, 0, 1, total)).bytesRead === 0;
  } finally {
    await fh.close();
  }
}

/** For tests and the sweep: is this an abandoned temp file of ours (its writer process is gone)? */
export async function isStaleTemp(file: string): Promise<boolean> {
  const m = TEMP_PATTERN.exec(path.basename(file));
  if (!m) return false;
  const pid = Number(m[1]);
  if (pid !== process.pid && !pidAlive(pid)) return true;
  // a live writer (or this process) keeps its temp unless it is a day old
  const st = await lstat(file).catch(() => undefined);
  return st !== undefined && Date.now() - st.mtimeMs > 24 * 3600 * 1000;
}
