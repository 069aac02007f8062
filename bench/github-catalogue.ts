/**
 * A real catalogue for the tool-search bench: one declaration per operation of GitHub's REST API,
 * from the description `@octokit/openapi` ships on npm. The package is large (~500 MB unpacked), so
 * it is not a dependency: the bench fetches it once with `npm pack` into `bench/out/` (the npm
 * registry is all it needs) and reads `generated/api.github.com.json` from the tarball's copy.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "23.0.2";
const here = dirname(fileURLToPath(import.meta.url));
/** bench/out of the checkout (this file runs from dist/bench/). */
const OUT = join(here, "..", "..", "bench", "out", "octokit-openapi");

export interface GithubOperation {
  /** `issues/list-for-repo` */
  operationId: string;
  /** The tool's name: `issues.list-for-repo` */
  name: string;
  summary: string;
  description: string;
  params: Record<string, unknown>;
}

/** The spec's file, fetched and unpacked on first use. */
function specFile(): string {
  const file = join(OUT, "package", "generated", "api.github.com.json");
  if (existsSync(file)) return file;
  mkdirSync(OUT, { recursive: true });
  execFileSync("npm", ["pack", `@octokit/openapi@${VERSION}`, "--silent"], { cwd: OUT, stdio: "ignore" });
  const tgz = readdirSync(OUT).find((f) => f.endsWith(".tgz"));
  if (!tgz) throw new Error(`npm pack left no tarball in ${OUT}`);
  execFileSync("tar", ["xzf", tgz, "package/generated/api.github.com.json"], { cwd: OUT });
  return file;
}

/** Markdown, HTML and notes out: the words a person reads. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/^>\s*\[!\w+\][^\n]*(\n>[^\n]*)*/gm, " ")
    .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, " ")
    .replace(/[`*_#>]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

const TOOL_NAME = /^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*$/;

/** Every operation whose id makes a valid tool name (family.verb, ≤ 64 characters). */
export function githubOperations(): GithubOperation[] {
  const spec = JSON.parse(readFileSync(specFile(), "utf8")) as {
    paths: Record<
      string,
      Record<string, { operationId?: string; summary?: string; description?: string; parameters?: unknown[] }>
    >;
  };
  const ops: GithubOperation[] = [];
  for (const methods of Object.values(spec.paths))
    for (const op of Object.values(methods)) {
      if (typeof op !== "object" || !op.operationId) continue;
      const name = op.operationId.replace("/", ".");
      if (!TOOL_NAME.test(name) || name.length > 64) continue;
      const properties: Record<string, unknown> = {};
      for (const p of op.parameters ?? []) {
        const param = p as { name?: string; description?: string };
        if (param.name)
          properties[param.name] = {
            type: "string",
            description: plainText(param.description ?? "").slice(0, 300),
          };
      }
      ops.push({
        operationId: op.operationId,
        name,
        summary: op.summary ?? name,
        description: plainText(op.description ?? "").slice(0, 4000),
        params: { type: "object", properties },
      });
    }
  return ops;
}

/**
 * The generated query of an operation, by a fixed rule: the first sentence of its description
 * (plain text), cut to its first 12 words; where the description is empty, the summary.
 */
export function generatedQuery(op: GithubOperation): string {
  const first = op.description.split(/(?<=[.!?])\s/)[0] ?? "";
  const words = (first.trim() === "" ? op.summary : first).split(/\s+/).slice(0, 12);
  return words.join(" ");
}
