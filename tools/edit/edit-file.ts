import { readFile, stat } from "node:fs/promises";
import { ToolError } from "../errors.js";
import type { ToolContext, ToolOutput } from "../types.js";
import { checkWritable, writeFileAtomic } from "./atomic-write.js";
import { compactDiff } from "./compact-diff.js";
import { errnoOf, fsError } from "./fs-errors.js";
import { type EditSpec, planEdits } from "./plan-edits.js";
import { decodeText } from "./text.js";
import { resolveWorkspacePath } from "./workspace-path.js";

export interface EditFileRequest {
  path: string;
  edits: readonly EditSpec[];
  dry: boolean;
  /** How the tool names an edit in messages. */
  label: (i: number) => string;
}

/**
 * The shared body of edit.replace and edit.multi: under the file's lock, read and decode it strictly, locate
 * every edit (all or nothing), write atomically, read back and compare. Every error leaves the file as it was.
 */
export async function editFile(req: EditFileRequest, ctx: ToolContext): Promise<ToolOutput> {
  const target = await resolveWorkspacePath(ctx.workspace, req.path);
  const display = target.rel;
  return ctx.locks.run(target.real, async function editLocked() {
    ctx.signal.throwIfAborted();
    const st = await stat(target.real).catch((err: unknown) => {
      if (errnoOf(err) === "ENOENT") {
        throw new ToolError(
          "file_not_found",
          `${display} does not exist. To create a new file use edit.write; to find the right path use edit.glob or edit.ls.`,
          { details: { path: display } },
        );
      }
      throw fsError(err, display);
    });
    if (st.isDirectory()) {
      throw new ToolError(
        "is_directory",
        `${display} is a directory; edits apply to files. Name a file inside it.`,
        {
          details: { path: display },
        },
      );
    }
    await checkWritable(target.real, display);
    const buf = await readFile(target.real, { signal: ctx.signal }).catch((err: unknown) => {
      throw fsError(err, display);
    });
    const decoded = decodeText(buf, display);
    const planned = planEdits(decoded.text, req.edits, display, req.label);
    const diff = compactDiff(display, decoded.text, planned);
    const lines = planned.map((p) => p.line);
    const blocks = planned.length;
    const noun = blocks === 1 ? "block" : "blocks";
    const at = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.join(", ")}`;
    if (req.dry) {
      return {
        text: `Dry run: would replace ${blocks} ${noun} in ${display} at ${at}; nothing was written.\n${diff}`,
        details: { path: display, dry: true, blocks, lines, diff },
      };
    }
    const bytes = spliceBytes(buf, decoded.bom ? 3 : 0, decoded.text, planned);
    await writeFileAtomic(target.real, bytes, { display, signal: ctx.signal });
    const back = await readFile(target.real).catch((err: unknown) => {
      throw fsError(err, display);
    });
    if (!back.equals(bytes)) {
      throw new ToolError(
        "failed",
        `${display} was written but reading it back shows different content (another program may be changing it). Read it again before editing.`,
        { details: { path: display } },
      );
    }
    return {
      text: `Replaced ${blocks} ${noun} in ${display} at ${at}.\n${diff}`,
      details: { path: display, blocks, lines, diff, bytes: bytes.byteLength },
    };
  });
}

/**
 * The new file bytes: the original bytes around each change kept as they are (only the replacements are
 * encoded), so a small edit of a large file does not re-encode the whole text.
 */
function spliceBytes(
  buf: Buffer,
  textStart: number,
  text: string,
  changes: readonly { start: number; end: number; replacement: string }[],
): Buffer {
  const parts: Buffer[] = [];
  let charPos = 0;
  let bytePos = textStart;
  let from = 0;
  for (const c of changes) {
    const startByte = bytePos + Buffer.byteLength(text.slice(charPos, c.start));
    const endByte = startByte + Buffer.byteLength(text.slice(c.start, c.end));
    parts.push(buf.subarray(from, startByte), Buffer.from(c.replacement, "utf8"));
    from = endByte;
    charPos = c.end;
    bytePos = endByte;
  }
  parts.push(buf.subarray(from));
  return Buffer.concat(parts);
}
