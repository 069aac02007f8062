import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { bytesHash, type FileIntent, fileHash, type IntentContext } from "../call/intent.js";
import { suggest, ToolError } from "../errors.js";
import type { ToolContext, ToolOutput } from "../types.js";
import { checkWritable, contentEquals, writeFileAtomic } from "./atomic-write.js";
import { type ByteEdit, type BytePlan, planOnBytes } from "./byte-plan.js";
import { compactDiff } from "./compact-diff.js";
import { errnoOf, fsError } from "./fs-errors.js";
import { type EditSpec, planEdits } from "./plan-edits.js";
import { checkNotSpecial, readRegularFile } from "./regular-file.js";
import { checkText, hasBom } from "./text.js";
import { resolveWorkspacePath } from "./workspace-path.js";

export interface EditFileRequest {
  path: string;
  edits: readonly EditSpec[];
  dry: boolean;
  /** How the tool names an edit in messages. */
  label: (i: number) => string;
}

/**
 * The shared body of edit.replace and edit.multi: under the file's lock, read it and check it is strict UTF-8,
 * locate every edit (all or nothing; on the bytes when the file has no CRLF, else on the decoded text), write
 * atomically, read back and compare. Every error leaves the file as it was.
 */
export async function editFile(req: EditFileRequest, ctx: ToolContext): Promise<ToolOutput> {
  const target = await resolveWorkspacePath(ctx.workspace, req.path, ctx.roots);
  const display = target.rel;
  return ctx.locks.run(target.real, async function editLocked() {
    ctx.signal.throwIfAborted();
    const { st, buf, plan } = await readAndPlan(target.real, display, req, ctx.signal);
    const { diff } = plan;
    const lines = plan.edits.map((p) => p.line);
    const blocks = plan.edits.length;
    const noun = blocks === 1 ? "block" : "blocks";
    const at = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.join(", ")}`;
    if (req.dry) {
      return {
        text: `Dry run: would replace ${blocks} ${noun} in ${display} at ${at}; nothing was written.\n${diff}`,
        details: { path: display, dry: true, blocks, lines, diff },
      };
    }
    const parts = spliceParts(buf, plan.edits);
    // Another process may have written the file since it was read: then the edit is not made.
    await writeFileAtomic(target.real, parts, {
      display,
      signal: ctx.signal,
      unchangedSince: st,
      ...(ctx.intentDurable ? { beforeRename: ctx.intentDurable } : {}),
    });
    const same = await contentEquals(target.real, parts).catch((err: unknown) => {
      throw fsError(err, display);
    });
    if (!same) {
      throw new ToolError(
        "failed",
        `${display} was written but reading it back shows different content (another program may be changing it). Read it again before editing.`,
        { details: { path: display } },
      );
    }
    const bytes = parts.reduce((n, p) => n + p.byteLength, 0);
    return {
      text: `Replaced ${blocks} ${noun} in ${display} at ${at}.\n${diff}`,
      details: { path: display, blocks, lines, diff, bytes },
    };
  });
}

/** Reads the file (a regular, writable, strict UTF-8 file) and locates every edit: the change, not yet made. */
async function readAndPlan(
  real: string,
  display: string,
  req: EditFileRequest,
  signal: AbortSignal,
): Promise<{ st: Stats; buf: Buffer; plan: BytePlan }> {
  const st = await stat(real).catch((err: unknown) => {
    if (errnoOf(err) === "ENOENT") {
      throw new ToolError("file_not_found", `${display} does not exist.`, {
        details: { path: display },
        explain: (where) =>
          `${display} does not exist in the workspace ${where.workspace} (paths are relative to it).` +
          suggest(where, ["edit.write"], "To create a new file use {tools}.") +
          suggest(where, ["edit.glob", "edit.ls"], "To find the right path use {tools}."),
      });
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
  checkNotSpecial(st, display);
  await checkWritable(real, display);
  const buf = await readRegularFile(real, display, signal);
  checkText(buf, display);
  const textStart = hasBom(buf) ? 3 : 0;
  const plan =
    planOnBytes(buf, textStart, req.edits, display) ??
    planOnText(buf, textStart, req.edits, display, req.label);
  return { st, buf, plan };
}

/**
 * The intent of an edit (tools/call/intent.ts): the file's hash now and once edited. A dry run changes
 * nothing; an edit that will fail as the file stands says so (`planned: false`), so a resumed run
 * runs it again only while the file is as it was.
 */
export async function planFileChange(req: EditFileRequest, ctx: IntentContext): Promise<FileIntent[]> {
  if (req.dry) return [];
  const target = await resolveWorkspacePath(ctx.workspace, req.path, ctx.roots);
  try {
    const { buf, plan } = await readAndPlan(target.real, target.rel, req, ctx.signal);
    return [{ path: target.real, before: bytesHash(buf), after: bytesHash(spliceParts(buf, plan.edits)) }];
  } catch {
    return [{ path: target.real, before: await fileHash(target.real), after: null, planned: false }];
  }
}

/**
 * The slow path, for files with CRLF (and every error): decode the whole text, plan on it (newline
 * normalisation, near-match hints), then turn the character offsets into byte offsets.
 */
function planOnText(
  buf: Buffer,
  textStart: number,
  edits: readonly EditSpec[],
  display: string,
  label: (i: number) => string,
): BytePlan {
  const text = buf.toString("utf8", textStart);
  const planned = planEdits(text, edits, display, label);
  const out: ByteEdit[] = [];
  let charPos = 0;
  let bytePos = textStart;
  for (const p of planned) {
    const start = bytePos + Buffer.byteLength(text.slice(charPos, p.start));
    const end = start + Buffer.byteLength(text.slice(p.start, p.end));
    out.push({ start, end, bytes: Buffer.from(p.replacement, "utf8"), line: p.line });
    charPos = p.end;
    bytePos = end;
  }
  return { edits: out, diff: compactDiff(display, text, planned) };
}

/** The new file as parts: the original bytes around each change as views of `buf`, then the new bytes. */
function spliceParts(buf: Buffer, edits: readonly ByteEdit[]): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (const e of edits) {
    parts.push(buf.subarray(from, e.start), e.bytes);
    from = e.end;
  }
  parts.push(buf.subarray(from));
  return parts;
}
