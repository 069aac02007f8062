import type { FileHandle } from "node:fs/promises";
import { ToolError } from "../errors.js";
import { checkText } from "./text.js";

/** Lines read from a file: raw bytes per line (newline and CR removed), cut lines marked with their length. */
export interface RawLine {
  bytes: Buffer;
  /** The full length in bytes when the line was longer than what was kept. */
  cutFrom?: number;
}

export interface ForwardWindow {
  lines: RawLine[];
  /** Total lines of the file when the read reached its end. */
  total?: number;
}

const CHUNK = 1024 * 1024;
/** Bytes kept of one line; longer lines are cut (a shown line is cut at 2000 characters anyway). */
export const KEEP_LINE_BYTES = 16 * 1024;

function checkChunk(chunk: Buffer, display: string, position: number): void {
  const nul = chunk.indexOf(0);
  if (nul !== -1) {
    throw new ToolError(
      "binary",
      `${display} is a binary file (it has a NUL byte at offset ${position + nul}). edit.read only shows text files.`,
      { details: { path: display, offset: position + nul } },
    );
  }
}

function stripCr(b: Buffer): Buffer {
  return b.length > 0 && b[b.length - 1] === 13 ? b.subarray(0, b.length - 1) : b;
}

/**
 * Streams a file from the start in chunks and keeps lines `first` .. `first + count - 1` (1-based), stopping
 * as soon as they are read. Memory stays within a chunk plus the kept lines.
 */
export async function readLinesForward(
  fh: FileHandle,
  first: number,
  count: number,
  display: string,
  signal?: AbortSignal,
): Promise<ForwardWindow> {
  const lines: RawLine[] = [];
  const buf = Buffer.allocUnsafe(CHUNK);
  let lineNo = 1;
  let partial: Buffer[] = [];
  let partialLen = 0;
  let position = 0;
  const wanted = () => lineNo >= first && lineNo < first + count;
  const keep = (piece: Buffer) => {
    if (wanted() && partialLen < KEEP_LINE_BYTES) {
      partial.push(Buffer.from(piece.subarray(0, KEEP_LINE_BYTES - partialLen)));
    }
    partialLen += piece.length;
  };
  const finishLine = () => {
    if (wanted()) {
      const bytes = stripCr(Buffer.concat(partial));
      lines.push(partialLen > KEEP_LINE_BYTES ? { bytes, cutFrom: partialLen } : { bytes });
      partial = [];
    }
    partialLen = 0;
    lineNo++;
  };
  for (;;) {
    signal?.throwIfAborted();
    const { bytesRead } = await fh.read(buf, 0, CHUNK, position);
    if (bytesRead === 0) break;
    const chunk = buf.subarray(0, bytesRead);
    checkChunk(chunk, display, position);
    position += bytesRead;
    let from = 0;
    while (lineNo < first - 1) {
      const nl = chunk.indexOf(10, from);
      if (nl === -1) break;
      partialLen = 0;
      lineNo++;
      from = nl + 1;
    }
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      keep(chunk.subarray(from, nl));
      finishLine();
      from = nl + 1;
      if (lineNo >= first + count) return { lines };
    }
    keep(chunk.subarray(from));
  }
  if (partialLen > 0) finishLine();
  return { lines, total: lineNo - 1 };
}

/**
 * Reads the last `count` lines of a file backwards in chunks, never more than `maxBytes` (a longer first line
 * is left out). `fromFirstLine` says the lines start at the file's first line.
 */
export async function readLinesBackward(
  fh: FileHandle,
  size: number,
  count: number,
  display: string,
  signal?: AbortSignal,
  maxBytes = 16 * 1024 * 1024,
): Promise<{ lines: RawLine[]; fromFirstLine: boolean }> {
  const chunks: Buffer[] = [];
  let collected = 0;
  let position = size;
  // a final newline ends the last line rather than starting an empty one (known after the first chunk)
  let newlines = 0;
  let endsWithNewline = false;
  while (position > 0 && newlines < count + (endsWithNewline ? 1 : 0) && collected < maxBytes) {
    signal?.throwIfAborted();
    const len = Math.min(64 * 1024, position);
    position -= len;
    const chunk = Buffer.allocUnsafe(len);
    await fh.read(chunk, 0, len, position);
    if (position + len === size) endsWithNewline = chunk[len - 1] === 10;
    checkChunk(chunk, display, position);
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines++;
    chunks.unshift(chunk);
    collected += len;
  }
  let tail = Buffer.concat(chunks);
  if (endsWithNewline) tail = tail.subarray(0, tail.length - 1);
  const parts: Buffer[] = [];
  let end = tail.length;
  for (let i = tail.lastIndexOf(10); i !== -1 && parts.length < count; i = tail.lastIndexOf(10, end - 1)) {
    parts.unshift(tail.subarray(i + 1, end));
    end = i;
    if (i === 0) break;
  }
  // the piece before the first newline is a whole line only when the read reached the file's start
  const fromFirstLine = parts.length < count && position === 0;
  if (fromFirstLine) parts.unshift(tail.subarray(0, end));
  return {
    lines: parts.map((p) => {
      const b = stripCr(p);
      return b.length > KEEP_LINE_BYTES
        ? { bytes: b.subarray(0, KEEP_LINE_BYTES), cutFrom: b.length }
        : { bytes: b };
    }),
    fromFirstLine,
  };
}

/** Decodes kept line bytes strictly (NUL/UTF-16/invalid UTF-8 refused), tolerating a character cut at the end. */
export function decodeLines(
  lines: readonly RawLine[],
  display: string,
): { text: string; cutFrom?: number }[] {
  return lines.map((l) => {
    let b = l.bytes;
    if (l.cutFrom !== undefined) b = b.subarray(0, completeUtf8Length(b));
    checkText(b, display);
    return l.cutFrom === undefined
      ? { text: b.toString("utf8") }
      : { text: b.toString("utf8"), cutFrom: l.cutFrom };
  });
}

/** Length of `b` without an incomplete UTF-8 sequence at its end. */
function completeUtf8Length(b: Buffer): number {
  let i = b.length - 1;
  let cont = 0;
  while (i >= 0 && (b[i]! & 0xc0) === 0x80 && cont < 3) {
    i--;
    cont++;
  }
  if (i < 0) return b.length;
  const lead = b[i]!;
  const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  return need > cont ? i : b.length;
}
