import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { fsError } from "./fs-errors.js";
import { checkNotSpecial } from "./regular-file.js";
import { resolveWorkspacePath, type WorkspacePath } from "./workspace-path.js";

/** Where grep and glob look: a folder (walked) or one file. */
export interface SearchTarget extends WorkspacePath {
  stats: Stats;
}

export async function resolveSearchTarget(
  workspace: string,
  input: string | undefined,
): Promise<SearchTarget> {
  const target = await resolveWorkspacePath(workspace, input ?? ".");
  let stats: Stats;
  try {
    stats = await stat(target.real);
  } catch (err) {
    throw fsError(err, target.rel);
  }
  // a FIFO, socket or device is never searched (opening one could block)
  checkNotSpecial(stats, target.rel);
  return { ...target, stats };
}

/** A path below the root as shown to the model: relative, `/`-separated. */
export function relTo(root: string, real: string): string {
  const rel = real.slice(root.length + (root.endsWith("/") ? 0 : 1));
  return rel === "" ? "." : rel;
}
