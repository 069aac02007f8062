import type { FileHandle } from "node:fs/promises";
import { z } from "zod";
import { defineBuiltin } from "../catalogue/declare.js";
import { suggest, ToolError } from "../errors.js";
import type { BuiltinTool } from "../types.js";
import { fsError } from "./fs-errors.js";
import { decodeLines, readLinesBackward, readLinesForward } from "./line-window.js";
import { openRegularFile } from "./regular-file.js";
import { decodeText } from "./text.js";
import { resolveWorkspacePath } from "./workspace-path.js";

const ReadArgs = z
  .object({
    path: z.string().describe("File to read, relative to the workspace root (or absolute inside it)."),
    offset: z
      .number()
      .int()
      .refine(
        (n) => n !== 0,
        "offset is 1-based: use 1 for the first line, or a negative number to count from the end",
      )
      .optional()
      .describe("Line to start at, 1-based. Negative counts from the end: -100 shows the last 100 lines."),
    limit: z.number().int().min(1).optional().describe("Maximum number of lines to show (at most 2000)."),
  })
  .strict();

const MAX_LINES = 2000;
const MAX_BYTES = 50 * 1024;
const MAX_LINE_CHARS = 2000;
/** Files up to this size are read whole (and checked whole); larger ones are read in a window only. */
const WHOLE_FILE_BYTES = 16 * 1024 * 1024;

interface WindowLine {
  text: string;
  /** Length of the whole line (bytes) when only its start was read. */
  cutFrom?: number;
}

interface Shown {
  /** Number of the first line (negative: counted from the end). */
  first: number;
  lines: WindowLine[];
  /** Lines the file has, when known. */
  total?: number;
  /** More lines follow the window. */
  more: boolean;
  /** Printed before the lines. */
  note?: string;
}

/** Numbers the lines, cuts long ones, caps at 2000 lines or 50 KB and says how to continue. */
function render(size: number, shown: Shown, limit: number): { text: string; last: number } {
  const out: string[] = [];
  if (shown.note) out.push(shown.note);
  let bytes = 0;
  let n = 0;
  for (const line of shown.lines) {
    if (n >= limit) break;
    let text = line.text;
    const chars = line.cutFrom === undefined ? text.length : undefined;
    if (text.length > MAX_LINE_CHARS || line.cutFrom !== undefined) {
      const whole = chars === undefined ? `${line.cutFrom} bytes` : `${chars} characters`;
      text = `${text.slice(0, MAX_LINE_CHARS)}… [line cut: ${whole} in all]`;
    }
    const row = `${shown.first + n}\t${text}`;
    const rowBytes = Buffer.byteLength(row) + 1;
    if (n > 0 && bytes + rowBytes > MAX_BYTES) break;
    out.push(row);
    bytes += rowBytes;
    n++;
  }
  const last = shown.first + n - 1;
  const moreHere = n < shown.lines.length || shown.more;
  if (moreHere && last !== -1) {
    const of = shown.total !== undefined ? ` of ${shown.total}` : "";
    const size_ = shown.total === undefined ? ` The file is ${size} bytes and has more lines.` : "";
    out.push(`[Showing lines ${shown.first}-${last}${of}.${size_} Use offset=${last + 1} to continue.]`);
  }
  return { text: out.join("\n"), last };
}

function stripBom(lines: WindowLine[], isFirst: boolean): void {
  const l = lines[0];
  if (isFirst && l && l.text.charCodeAt(0) === 0xfeff) l.text = l.text.slice(1);
}

function outOfRange(display: string, offset: number, total: number): ToolError {
  return new ToolError(
    "offset_out_of_range",
    `offset ${offset} is past the end of ${display}, which has ${total} lines. Use an offset from 1 to ${total}, or a negative offset to read from the end.`,
    { details: { path: display, offset, lines: total } },
  );
}

async function readSmall(fh: FileHandle, display: string, offset: number, want: number): Promise<Shown> {
  const { text } = decodeText(await fh.readFile(), display);
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  const first = offset > 0 ? offset : Math.max(1, total + offset + 1);
  if (offset > total) throw outOfRange(display, offset, total);
  const window = lines
    .slice(first - 1, first - 1 + want)
    .map((l) => ({ text: l.endsWith("\r") ? l.slice(0, -1) : l }));
  return { first, lines: window, total, more: first - 1 + want < total };
}

async function readLarge(
  fh: FileHandle,
  size: number,
  display: string,
  offset: number,
  want: number,
  signal: AbortSignal,
): Promise<Shown> {
  if (offset > 0) {
    const w = await readLinesForward(fh, offset, want + 1, display, signal);
    if (w.total !== undefined && offset > w.total) throw outOfRange(display, offset, w.total);
    const lines: WindowLine[] = decodeLines(w.lines, display);
    stripBom(lines, offset === 1);
    const more = lines.length > want;
    return { first: offset, lines: lines.slice(0, want), total: w.total, more };
  }
  const count = -offset;
  const b = await readLinesBackward(fh, size, count, display, signal);
  const lines: WindowLine[] = decodeLines(b.lines, display);
  if (b.fromFirstLine) {
    stripBom(lines, true);
    return { first: 1, lines: lines.slice(0, want), total: lines.length, more: lines.length > want };
  }
  return {
    first: -lines.length,
    lines: lines.slice(0, want),
    more: lines.length > want,
    note: `[${display} is ${size} bytes, too large to count its lines quickly: lines are numbered from the end, -1 being the last.]`,
  };
}

/** edit.read: a window of a text file, numbered, capped. */
export function createReadTool(): BuiltinTool {
  return defineBuiltin({
    name: "edit.read",
    description:
      "Read a text file: lines numbered as `number<TAB>text`, from offset (1-based; negative counts from the end), capped at 2000 lines or 50 KB, with a note saying which offset continues.",
    snippet: "read a file's lines (offset/limit for large files)",
    guidelines: [
      "Read a file with edit.read before editing it; for large files read the part you need with offset and limit.",
      "The numbers and TAB at the start of each line are not part of the file: never copy them into an edit.",
      "To find where something is, search with edit.grep or edit.glob (when enabled) instead of reading whole trees.",
    ],
    schema: ReadArgs,
    async execute(a, ctx) {
      const target = await resolveWorkspacePath(ctx.workspace, a.path, ctx.roots);
      const display = target.rel;
      const offset = a.offset ?? 1;
      const want = Math.min(a.limit ?? MAX_LINES, MAX_LINES);
      // stat before open: a FIFO, socket or device is refused without holding a pool thread
      const { fh, stats: st } = await openRegularFile(
        target.real,
        display,
        () =>
          new ToolError("is_directory", `${display} is a directory. Name a file in it.`, {
            details: { path: display },
            explain: (where) =>
              `${display} is a directory.${suggest(where, ["edit.ls"], "List it with {tools}, or")}${where.offers("edit.ls") ? " name" : " Name"} a file in it.`,
          }),
      );
      try {
        if (st.size === 0) {
          if (offset > 1) throw outOfRange(display, offset, 0);
          return { text: `${display} is empty (0 bytes).`, details: { path: display, lines: 0, bytes: 0 } };
        }
        const shown =
          st.size <= WHOLE_FILE_BYTES
            ? await readSmall(fh, display, offset, want)
            : await readLarge(fh, st.size, display, offset, want, ctx.signal);
        const { text, last } = render(st.size, shown, want);
        return {
          text,
          details: {
            path: display,
            bytes: st.size,
            from: shown.first,
            to: last,
            ...(shown.total === undefined ? {} : { lines: shown.total }),
          },
        };
      } catch (err) {
        throw fsError(err, display);
      } finally {
        await fh.close();
      }
    },
  });
}
