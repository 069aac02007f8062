/**
 * No code reaches a dependency's protected or private members: tsc refuses such access when typed,
 * so what is looked for here is the ways around it — a cast to a hand-written shape, a call of an
 * underscore method, a member named as a string, a silenced type error. The etcd lane once read
 * etcd3's protected `pool` through `as unknown as { pool }` and grpc-js's `_isSecure()`, which an
 * upgrade of either could break without a word. Tests may do what they must; the product may not.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
/** Every folder of TypeScript the build compiles (tsconfig.json's include, tests aside). */
const SOURCES = [
  "shared",
  "tree",
  "tools",
  "prompts",
  "agent",
  "mcp",
  "compose",
  "server",
  "cli",
  "bench",
  "web/src",
  "scripts",
];

const RULES: Array<{ pattern: RegExp; why: string }> = [
  {
    pattern: /as unknown as \{/,
    why: "a cast to a hand-written shape, the way to reach a member a type hides",
  },
  { pattern: /\.\s*_[A-Za-z]\w*\s*\(/, why: "a call of an underscore method, private by convention" },
  { pattern: /\[\s*["'`]_\w+["'`]\s*\]/, why: "an underscore member named as a string" },
  { pattern: /@ts-(ignore|expect-error|nocheck)/, why: "a silenced type error" },
];

function* files(dir: string): Generator<string> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* files(path);
    else if (/\.(ts|mts|js|mjs)$/.test(e.name) && !e.name.endsWith(".d.ts")) yield path;
  }
}

/** Each line of `text` a rule finds, as `path:line: text (why)`. */
function findings(path: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const rule of RULES)
      if (rule.pattern.test(line)) found.push(`${path}:${i + 1}: ${line.trim()} (${rule.why})`);
  });
  return found;
}

describe("dependencies' non-public members", () => {
  it("are reached nowhere in the code", () => {
    const found: string[] = [];
    let scanned = 0;
    for (const dir of SOURCES)
      for (const path of files(join(ROOT, dir))) {
        scanned++;
        found.push(...findings(relative(ROOT, path), readFileSync(path, "utf8")));
      }
    expect(scanned).toBeGreaterThan(100);
    expect(found).toEqual([]);
  });

  it("would be found the way the etcd lane once reached them", () => {
    const before = [
      "    this.#pool = (client as unknown as { pool: Pool }).pool;",
      "    const secure = m.channelCredentials._isSecure();",
      '    const s = grpc["_internal"];',
      "    // @ts-expect-error the member is private",
    ].join("\n");
    expect(findings("old.ts", before)).toHaveLength(4);
  });
});
