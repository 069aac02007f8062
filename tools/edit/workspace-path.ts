import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../errors.js";
import { errnoOf, fsError } from "./fs-errors.js";

/** A path the model gave, resolved against the workspace and known to be inside it. */
export interface WorkspacePath {
  /** What the model wrote, for messages. */
  input: string;
  /** The real path (symlinks resolved; for a missing file, its nearest existing parent's real path + the rest). */
  real: string;
  /** `real` relative to the workspace root (`.` for the root itself), with `/` separators. */
  rel: string;
  /** The workspace root's real path. */
  root: string;
}

const MAX_LINKS = 40;

/** Refuses NUL bytes and Windows drive or UNC paths before anything touches the disk. */
export function checkPathSyntax(input: string): void {
  if (input.includes("\0")) {
    throw new ToolError(
      "invalid_path",
      "The path contains a NUL byte. Give a plain path inside the workspace.",
      {
        details: { path: input },
      },
    );
  }
  if (/^[A-Za-z]:([\\/]|$)/.test(input) || input.startsWith("\\\\")) {
    throw new ToolError(
      "invalid_path",
      `${input} is a Windows path. Give a POSIX path relative to the workspace root, e.g. src/index.ts.`,
      { details: { path: input } },
    );
  }
}

/**
 * The real path of `p`: symlinks resolved, dangling ones followed to their target, and for a path that does
 * not exist the real path of its nearest existing parent joined with the missing rest.
 */
export async function realpathLoose(p: string, hops = 0): Promise<string> {
  if (hops > MAX_LINKS) throw Object.assign(new Error(`too many symbolic links: ${p}`), { code: "ELOOP" });
  try {
    return await realpath(p);
  } catch (err) {
    if (errnoOf(err) !== "ENOENT") throw err;
  }
  const st = await lstat(p).catch((err: unknown) => {
    if (errnoOf(err) === "ENOENT" || errnoOf(err) === "ENOTDIR") return undefined;
    throw err;
  });
  if (st?.isSymbolicLink()) {
    const target = path.resolve(path.dirname(p), await readlink(p));
    return realpathLoose(target, hops + 1);
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  return path.join(await realpathLoose(parent, hops), path.basename(p));
}

/** True when `real` is `root` or below it (decided against root + separator, so /root-evil is outside /root). */
export function isInside(root: string, real: string): boolean {
  if (real === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return real.startsWith(prefix);
}

function toRel(root: string, real: string): string {
  const rel = path.relative(root, real);
  return rel === "" ? "." : rel.split(path.sep).join("/");
}

async function rootOf(workspace: string): Promise<string> {
  try {
    return await realpath(workspace);
  } catch (err) {
    throw fsError(err, `the workspace root ${workspace}`);
  }
}

function outside(input: string, real: string, root: string): ToolError {
  return new ToolError(
    "outside_root",
    `${input} resolves to ${real}, which is outside the workspace ${root}. Only paths inside the workspace can be used.`,
    { details: { path: input, real, root } },
  );
}

/**
 * Resolves a path the model gave (relative to the workspace root, or absolute inside it or inside one of the
 * policy's extra roots, given as real paths) to its real path and checks containment. A path in an extra root
 * is shown absolute. Throws `invalid_path` or `outside_root` (kind `denied`).
 */
export async function resolveWorkspacePath(
  workspace: string,
  input: string,
  extraRoots: readonly string[] = [],
): Promise<WorkspacePath> {
  checkPathSyntax(input);
  const root = await rootOf(workspace);
  const lexical = path.resolve(root, input === "" ? "." : input);
  let real: string;
  try {
    real = await realpathLoose(lexical);
  } catch (err) {
    throw fsError(err, input);
  }
  if (isInside(root, real)) return { input, real, rel: toRel(root, real), root };
  const extra = extraRoots.find((r) => isInside(r, real));
  if (extra === undefined) throw outside(input, real, root);
  return { input, real, rel: real, root: extra };
}

/**
 * Resolves a directory entry itself rather than what it points to (for rename: a symlink is moved, not its
 * target): the real path of the parent plus the last name. The entry must not be the root.
 */
export async function resolveWorkspaceEntry(
  workspace: string,
  input: string,
  extraRoots: readonly string[] = [],
): Promise<WorkspacePath> {
  checkPathSyntax(input);
  const lexicalIn = path.resolve(await rootOf(workspace), input === "" ? "." : input);
  const inExtra = extraRoots.find((r) => isInside(r, lexicalIn) && lexicalIn !== r);
  const root = inExtra ?? (await rootOf(workspace));
  const lexical = path.resolve(root, input === "" ? "." : input);
  let parent: string;
  try {
    parent = await realpathLoose(path.dirname(lexical));
  } catch (err) {
    throw fsError(err, input);
  }
  const real = path.join(parent, path.basename(lexical));
  if (!isInside(root, parent) || real === root || !isInside(root, real)) {
    if (real === root) {
      throw new ToolError("invalid_path", `${input} is the workspace root itself; name an entry inside it.`, {
        details: { path: input },
      });
    }
    throw outside(input, real, root);
  }
  return { input, real, rel: inExtra ? real : toRel(root, real), root };
}

/** True when `real` lies inside a path the policy denies (real paths, from the tool context). */
export function isDeniedPath(deny: readonly string[] | undefined, real: string): boolean {
  return deny?.some((d) => isInside(d, real)) ?? false;
}
