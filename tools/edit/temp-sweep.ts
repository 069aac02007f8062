import { unlink } from "node:fs/promises";
import path from "node:path";
import { isStaleTemp, TEMP_PATTERN } from "./atomic-write.js";
import { walkFiles } from "./walker.js";

/**
 * Removes the temp files a killed writer left below `root` (`.<name>.byteseek-tmp-<pid>-<hex>` whose process
 * is gone). Call it at start. Answers how many were removed.
 */
export async function sweepTempFiles(root: string): Promise<number> {
  const { files } = await walkFiles(root, { root, gitignore: false });
  let removed = 0;
  for (const file of files) {
    if (!TEMP_PATTERN.test(path.basename(file))) continue;
    if (!(await isStaleTemp(file))) continue;
    try {
      await unlink(file);
      removed++;
    } catch {
      // already gone (another sweep) or not ours to remove: nothing to do
    }
  }
  return removed;
}
