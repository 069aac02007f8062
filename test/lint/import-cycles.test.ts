/**
 * No module imports itself back, through any number of others — type-only imports included: a
 * cycle of types today is a cycle of values after the next refactor, and it is the sign of a
 * shared piece without a home of its own (the etcd lane's `PENDING`, the MCP server's identity, the
 * node record's fields and the policy's `netHosts` each got one). Stray `console` calls and biome's
 * warnings are refused by `npm run check` (biome.json's noConsole, `--error-on-warnings`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
/** The product's TypeScript (tests, scripts and the page's own build aside). */
const SOURCES = ["shared", "tree", "tools", "prompts", "agent", "mcp", "compose", "server", "cli", "bench"];
/**
 * The floors of the parts (docs/ARCHITECTURE.md): a module imports from its own part and the
 * floors below, never from its own floor's other parts or from above. A trip from an entry point
 * (server/, cli/) goes down once: the composition root (compose/) wires agent/, mcp/, prompts/ and
 * tools/, and none of them climbs back to it.
 */
const FLOORS: ReadonlyArray<readonly string[]> = [
  ["shared"],
  ["tree"],
  ["tools"],
  ["prompts"],
  ["agent", "mcp"],
  ["compose"],
  ["server"],
  ["cli"],
  ["bench"],
];
/**
 * `import … from "./x.js"` and `export … from "./x.js"`, over several lines too, and `import("./x.js")`:
 * a module loaded when it is needed (the CLI's commands) is as much a dependency as one loaded at start.
 */
const RELATIVE_IMPORT =
  /^(?:import|export)\s[^;]*?\sfrom\s+"(\.{1,2}\/[^"]+)"|\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)/gms;

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* files(path);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) yield path;
  }
}

/** Each module (path from the root) and the modules it imports. */
function importGraph(root: string, sources: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const dir of sources)
    for (const path of files(join(root, dir))) {
      const text = readFileSync(path, "utf8");
      const deps = [...text.matchAll(RELATIVE_IMPORT)].map((m) =>
        relative(root, resolve(dirname(path), ((m[1] ?? m[2]) as string).replace(/\.js$/, ".ts"))),
      );
      graph.set(relative(root, path), deps);
    }
  return graph;
}

/** Each import of `graph` from a part to a part on its own floor or above: `from → to`. */
function upwardImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const floor = (path: string) => FLOORS.findIndex((parts) => parts.includes(path.split("/")[0] as string));
  const found: string[] = [];
  for (const [from, deps] of graph)
    for (const to of deps) {
      const a = from.split("/")[0];
      const b = to.split("/")[0];
      if (a !== b && floor(to) >= floor(from)) found.push(`${from} → ${to}`);
    }
  return found;
}

/** The cycles of `graph`: each strongly connected set of two or more modules (or one importing itself). */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      set.push(w);
    } while (w !== v);
    if (set.length > 1 || graph.get(v)?.includes(v)) cycles.push(set.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe("imports", () => {
  it("form no cycle anywhere in the product, type-only imports included", () => {
    const graph = importGraph(ROOT, SOURCES);
    expect(graph.size).toBeGreaterThan(200);
    expect(importCycles(graph).map((c) => c.join(" → "))).toEqual([]);
  });

  it("go down the floors only: no part imports its own floor's other parts or one above", () => {
    const graph = importGraph(ROOT, SOURCES);
    expect(FLOORS.flat().sort()).toEqual([...SOURCES].sort());
    expect(upwardImports(graph)).toEqual([]);
  });

  it("are read as upward when a lower part imports a higher one or a sibling on its floor", () => {
    const graph = new Map([
      ["tools/a.ts", ["tree/b.ts", "compose/c.ts"]],
      ["agent/d.ts", ["mcp/e.ts", "agent/f.ts"]],
      ["cli/g.ts", ["server/h.ts"]],
    ]);
    expect(upwardImports(graph)).toEqual(["tools/a.ts → compose/c.ts", "agent/d.ts → mcp/e.ts"]);
  });

  it("are read as cycles when two modules import each other, by a type or through a third", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
      ["e.ts", ["e.ts"]],
    ]);
    expect(importCycles(graph)).toEqual([["a.ts", "b.ts", "c.ts"], ["e.ts"]]);
  });
});
