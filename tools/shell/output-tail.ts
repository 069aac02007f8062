import { open } from "node:fs/promises";

export interface Tail {
  /** The last lines of the output, decoded leniently (it is output, not a file to edit). */
  text: string;
  /** The output was longer than what `text` shows. */
  truncated: boolean;
  /** Lines in the whole output. */
  totalLines: number;
  shownLines: number;
  bytes: number;
}

const CHUNK = 1024 * 1024;

async function countLines(file: string, size: number): Promise<number> {
  const fh = await open(file, "r");
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let n = 0;
    let last = 10;
    for (let pos = 0; pos < size; ) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
      if (bytesRead === 0) break;
      for (let i = buf.indexOf(10); i !== -1 && i < bytesRead; i = buf.indexOf(10, i + 1)) n++;
      last = buf[bytesRead - 1]!;
      pos += bytesRead;
    }
    return last === 10 ? n : n + 1;
  } finally {
    await fh.close();
  }
}

/** The last `maxLines` lines / `maxBytes` bytes of an output file, without reading the rest into memory. */
export async function readTail(file: string, maxLines: number, maxBytes: number): Promise<Tail> {
  const fh = await open(file, "r");
  let raw: Buffer;
  let size: number;
  try {
    size = (await fh.stat()).size;
    const len = Math.min(size, maxBytes);
    raw = Buffer.alloc(len);
    await fh.read(raw, 0, len, size - len);
  } finally {
    await fh.close();
  }
  let cutByBytes = raw.length < size;
  if (cutByBytes) {
    // start at a whole line when the window has one
    const nl = raw.indexOf(10);
    if (nl !== -1 && nl < raw.length - 1) raw = raw.subarray(nl + 1);
  }
  let text = raw.toString("utf8");
  if (text.endsWith("\n")) text = text.slice(0, -1);
  let lines = text === "" ? [] : text.split("\n");
  if (lines.length > maxLines) {
    lines = lines.slice(lines.length - maxLines);
    cutByBytes = true;
  }
  const truncated = cutByBytes;
  const totalLines = truncated ? await countLines(file, size) : lines.length;
  return { text: lines.join("\n"), truncated, totalLines, shownLines: lines.length, bytes: size };
}
