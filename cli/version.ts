import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** byteseek's version, from its package.json (beside the sources, or two folders up from dist/cli/). */
export function packageVersion(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, ".."), join(here, "..", "..")]) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "byteseek" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // not this folder: try the next
    }
  }
  return "unknown";
}
