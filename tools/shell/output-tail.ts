import { open } from "node:fs/promises";
import { errnoOf } from "../edit/fs-errors.js";

export interface Tail {
  /** The last lines of the output, decoded leniently (it is output, not a file to edit). */
  text: string;
  /** The output was longer than what `text` shows. */
  truncated: boolean;
  /** Lines in the whole output. */
  totalLines: number;
  shownLines: number;
  /** Bytes in the whole output. */
  bytes: number;
}

/**
 * The last `maxLines` lines / `maxBytes` bytes of a spooled output file (which holds the tail of
 * the output, `totals` counting all of it), without reading the rest into memory.
 */
export async function readTail(
  file: string,
  maxLines: number,
  maxBytes: number,
  totals: { bytes: number; lines: number },
): Promise<Tail> {
  let raw = Buffer.alloc(0);
  let size = 0;
  const fh = await open(file, "r").catch((err: unknown) => {
    if (errnoOf(err) === "ENOENT") return undefined; // the command wrote nothing
    throw err;
  });
  if (fh) {
    try {
      size = (await fh.stat()).size;
      const len = Math.min(size, maxBytes);
      raw = Buffer.alloc(len);
      await fh.read(raw, 0, len, size - len);
    } finally {
      await fh.close();
    }
  }
  let truncated = raw.length < totals.bytes;
  if (truncated) {
    // start at a whole line when the window has one
    const nl = raw.indexOf(10);
    if (nl !== -1 && nl < raw.length - 1) raw = raw.subarray(nl + 1);
  }
  let text = raw.toString("utf8");
  if (text.endsWith("\n")) text = text.slice(0, -1);
  let lines = text === "" ? [] : text.split("\n");
  if (lines.length > maxLines) {
    lines = lines.slice(lines.length - maxLines);
    truncated = true;
  }
  return {
    text: lines.join("\n"),
    truncated,
    totalLines: truncated ? totals.lines : lines.length,
    shownLines: lines.length,
    bytes: totals.bytes,
  };
}
