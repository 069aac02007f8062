import { isUtf8 } from "node:buffer";
import { ToolError } from "../errors.js";

export const UTF8_BOM = "\uFEFF";

/** A text file decoded for editing: the BOM split off, the text exactly as stored otherwise. */
export interface DecodedText {
  /** The text without the BOM (CRLF kept). */
  text: string;
  bom: boolean;
}

/** Where the first byte that is not valid UTF-8 sits (byte offset), or -1. */
export function firstInvalidUtf8(buf: Uint8Array): number {
  let i = 0;
  const n = buf.length;
  while (i < n) {
    const b = buf[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = buf[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

function lineAt(buf: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < buf.length; i++) if (buf[i] === 0x0a) line++;
  return line;
}

/** True when the NUL bytes of `buf` sit on one parity only, as in UTF-16 text without a BOM. */
function looksLikeUtf16(buf: Uint8Array): boolean {
  const n = Math.min(buf.length, 8192);
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i++) {
    if (buf[i] === 0) {
      if (i % 2 === 0) even++;
      else odd++;
    }
  }
  const need = Math.max(2, (n / 2) * 0.3);
  return (even === 0 && odd >= need) || (odd === 0 && even >= need);
}

function encodingError(display: string, what: string, details: Record<string, unknown>): ToolError {
  return new ToolError(
    "encoding",
    `${display} is ${what}, not UTF-8. The edit tools only change UTF-8 text and never rewrite a file with replacement characters. Leave it, or convert it first with shell.run (e.g. iconv -f <encoding> -t UTF-8) if the user wants that.`,
    { details: { path: display, ...details } },
  );
}

/**
 * Checks that a byte range is editable text: no UTF-16/32 BOM, no NUL byte (`binary`), strict UTF-8
 * (`encoding`). `display` names the file in messages.
 */
export function checkText(buf: Uint8Array, display: string): void {
  if (buf.length >= 2 && ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff))) {
    throw encodingError(display, "UTF-16 or UTF-32 text (it starts with a byte order mark)", {
      encoding: "utf-16",
    });
  }
  const nul = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).indexOf(0);
  if (nul !== -1) {
    if (looksLikeUtf16(buf)) throw encodingError(display, "most likely UTF-16 text", { encoding: "utf-16" });
    throw new ToolError(
      "binary",
      `${display} is a binary file (it has a NUL byte at offset ${nul}). The edit tools only read and change text files.`,
      { details: { path: display, offset: nul } },
    );
  }
  if (!isUtf8(buf)) {
    const at = firstInvalidUtf8(buf);
    throw encodingError(
      display,
      `in another encoding (invalid UTF-8 at byte ${at}, line ${lineAt(buf, at)})`,
      {
        offset: at,
        line: lineAt(buf, at),
      },
    );
  }
}

/** Does the buffer start with a UTF-8 byte order mark? */
export function hasBom(buf: Uint8Array): boolean {
  return buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
}

/** Decodes a whole file strictly (see `checkText`) and splits off a UTF-8 BOM. */
export function decodeText(buf: Buffer, display: string): DecodedText {
  checkText(buf, display);
  const bom = hasBom(buf);
  return { text: buf.toString("utf8", bom ? 3 : 0), bom };
}

/** The newline of the file: the more common of CRLF and LF (the first one seen on a tie), LF when none. */
export function newlineStyle(text: string): "\n" | "\r\n" {
  let crlf = 0;
  let lf = 0;
  let first: "\n" | "\r\n" | undefined;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    const isCrlf = i > 0 && text.charCodeAt(i - 1) === 13;
    if (isCrlf) crlf++;
    else lf++;
    first ??= isCrlf ? "\r\n" : "\n";
  }
  if (crlf === lf) return first ?? "\n";
  return crlf > lf ? "\r\n" : "\n";
}

/** Converts any newlines of `text` to `nl`. */
export function withNewlines(text: string, nl: "\n" | "\r\n"): string {
  const lf = text.replace(/\r\n/g, "\n");
  return nl === "\n" ? lf : lf.replace(/\n/g, "\r\n");
}

/**
 * The text with CRLF read as LF, and a map back to offsets in the original. Matching happens on `text`;
 * `toOriginal` turns a span boundary into the original offset (a CR before a matched LF is inside the span).
 */
export interface NormalizedText {
  text: string;
  toOriginal(offset: number): number;
}

export function normalizeNewlines(original: string): NormalizedText {
  if (!original.includes("\r\n")) return { text: original, toOriginal: (o) => o };
  // positions (in the normalized text) of each LF that had a CR removed before it
  const removed: number[] = [];
  const parts: string[] = [];
  let from = 0;
  for (let i = original.indexOf("\r\n"); i !== -1; i = original.indexOf("\r\n", i + 2)) {
    parts.push(original.slice(from, i));
    removed.push(i - removed.length);
    from = i + 1;
  }
  parts.push(original.slice(from));
  const text = parts.join("");
  return {
    text,
    toOriginal(offset: number): number {
      let lo = 0;
      let hi = removed.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (removed[mid]! < offset) lo = mid + 1;
        else hi = mid;
      }
      return offset + lo;
    },
  };
}
