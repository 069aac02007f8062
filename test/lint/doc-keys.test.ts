/**
 * byteseek's own documents are parsed, not cast, and its keys are built in one place
 * (shared/keys.ts): a new `as unknown as` in the product or its benches, or a key spelled by hand
 * — a `"/byteseek/…"` / `"/vthread/…"` literal, the same prefix in a regular expression
 * (`/^\/byteseek\/…/`), or a page link to it (`"/ui/byteseek/…"`) — there or in the web page's
 * source, outside the allow-list below fails here. Each allowed place says why; lower a count here
 * when a place is mended. Tests, docs and comments are out of scope.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
/** The product's parts, and bench/ (a bench that spells a key by hand drifts from the product's when it is renamed). */
const SOURCES = ["shared", "tree", "tools", "prompts", "agent", "mcp", "compose", "server", "cli", "bench"];
/**
 * Where keys are looked for: the product, bench/, and the web page, which imports the same map
 * (web/tsconfig.json compiles shared/keys.ts beside the page's scripts; it imports nothing).
 */
const KEY_SOURCES = [...SOURCES, "web/src"];
/** The key map itself. */
const KEY_MAP = "shared/keys.ts";

/** Casts a library's types force (no document is read through them), by file: how many, and why. */
const CASTS: Record<string, [number, string]> = {
  "bench/chaos-store.ts": [
    1,
    "the chaos bench's tally reads the session messages its workers wrote as they are (its behaviour is pinned while a long run uses it)",
  ],
  "bench/edit.ts": [1, "the edit tools' context without a tree: they never touch it"],
  "bench/etcd-probe.ts": [1, "the probe wraps the etcd client's prototype methods to count what they send"],
  "cli/key-answer.ts": [1, "node's emitKeypressEvents takes a ReadableStream the tty type does not name"],
  "mcp/fast-call.ts": [1, "the SDK's input_required result type is not in its CallToolResult union"],
  "server/app.ts": [2, "fastify's reply and request types for the raw fast path and the default serializer"],
  "server/routes/transfer.ts": [
    2,
    "fastify's send takes a stream its type does not name; export lines typed",
  ],
  "server/routes/tree.ts": [2, "fastify's 304 body and a node answer the route schema types apart"],
  "tools/catalogue/json-schema.ts": [1, "ajv-formats' CommonJS default export"],
  "tools/impl/kinds.ts": [1, "a runner table indexed by kind: TypeScript cannot narrow the generic"],
  "tools/mcp/upstream-http.ts": [1, "undici's headers to the fetch Headers type the SDK takes"],
  "tree/record.ts": [1, "the fields TreeNode declares for the record's kind, set just above"],
};
/** Prefix literals left, by file: how many, and why (none: every key is built by shared/keys.ts). */
const PREFIXES: Record<string, [number, string]> = {};
/** A key prefix spelled by hand: a string that starts with it (a page link too), or a regex escaping it. */
const HAND_SPELLED = /["'`](?:\/ui)?\/(?:byteseek|vthread)\/|\\\/(?:byteseek|vthread)\\\//g;

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* files(path);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) yield path;
  }
}

/** Per file of `sources` under `root`, the count of `pattern` on lines that are code (comment lines skipped). */
function census(pattern: RegExp, sources: readonly string[] = SOURCES, root = ROOT): Map<string, number> {
  const out = new Map<string, number>();
  for (const dir of sources)
    for (const path of files(join(root, dir))) {
      const file = relative(root, path);
      if (file === KEY_MAP) continue;
      let n = 0;
      for (const line of readFileSync(path, "utf8").split("\n")) {
        const t = line.trim();
        if (t.startsWith("//") || t.startsWith("*") || t.startsWith("/*")) continue;
        n += [...line.matchAll(pattern)].length;
      }
      if (n > 0) out.set(file, n);
    }
  return out;
}

/** The files whose count is beyond what the allow-list grants, with both counts. */
function beyond(found: Map<string, number>, allowed: Record<string, [number, string]>): string[] {
  return [...found]
    .filter(([file, n]) => n > (allowed[file]?.[0] ?? 0))
    .map(([file, n]) => `${file}: ${n} (allowed ${allowed[file]?.[0] ?? 0})`);
}

describe("the tree's own documents and keys", () => {
  it("are never cast with `as unknown as` outside the allow-list", () => {
    expect(beyond(census(/as unknown as/g), CASTS)).toEqual([]);
  });

  it("have their /byteseek/ and /vthread/ prefixes spelled only in shared/keys.ts (and the allow-list), the web page's source included", () => {
    expect(beyond(census(HAND_SPELLED, KEY_SOURCES), PREFIXES)).toEqual([]);
  });

  it("would be found spelled by hand in the web page, as its source spelled them before it took the key map", () => {
    const root = mkdtempSync(join(tmpdir(), "doc-keys-"));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), text);
      };
      for (const dir of SOURCES) mkdirSync(join(root, dir), { recursive: true });
      write(KEY_MAP, 'const BYTESEEK = "/byteseek/";\n');
      write(
        "web/src/approvals-view.ts",
        [
          "/** Re-read whenever the watch reports a change under /byteseek/approval/. */",
          '// a comment may name "/byteseek/approval/"',
          'const APPROVAL_DIR = "/byteseek/approval/";',
          "const vid = /^\\/byteseek\\/approval\\/([^/]+)\\//.exec(e.key)?.[1];",
          'const own = [`/vthread/` + vid, "/byteseek/policy"];',
          "rowLink(`/ui/byteseek/mcp/` + encodeURIComponent(s.server));",
          "const fine = dirs.approvals;",
        ].join("\n"),
      );
      expect(census(HAND_SPELLED, KEY_SOURCES, root)).toEqual(new Map([["web/src/approvals-view.ts", 5]]));
      expect(beyond(census(HAND_SPELLED, KEY_SOURCES, root), PREFIXES)).toEqual([
        "web/src/approvals-view.ts: 5 (allowed 0)",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
