/**
 * The figures of tool search (issue 33), on a real catalogue: GitHub's REST API, one declaration per
 * operation (bench/github-catalogue.ts), plus byteseek's shipped tools.
 * - recall@1, @5, @10 of generated queries (one per operation, by the rule in github-catalogue.ts)
 *   and of the hand-written paraphrases in bench/tool-search-queries.json
 *   (bars: recall@5 ≥ 0.85 generated, ≥ 0.70 paraphrases);
 * - search latency at 10,000 tools, p50/p99 (bar: p50 ≤ 2 ms);
 * - the delay from a declaration's write to its being found, on LevelDB (bar: ≤ 50 ms);
 * - prompt bytes per turn at 10, 100, 1,000 and 5,000 tools, `all` against `deferred`
 *   (bar: at 1,000 tools deferred sends ≥ 85% fewer schema bytes).
 * Run: npm run build && node dist/bench/tool-search.js [--quick]
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { createBuiltins, createByteseek } from "../compose/byteseek.js";
import { keys } from "../shared/keys.js";
import { POLICY_KEY } from "../tools/gate/policy.js";
import { indexedToolOf } from "../tools/search/document.js";
import { createToolIndex, type IndexedTool, type ToolIndex } from "../tools/search/index.js";
import { createLiveToolIndex } from "../tools/search/live.js";
import { json, openTree } from "../tree/index.js";
import type { Tree } from "../tree/types.js";
import type { Json } from "../tree/value.js";
import { startEtcd } from "./etcd-process.js";
import { type GithubOperation, generatedQuery, githubOperations } from "./github-catalogue.js";
import { percentile, printTable } from "./report.js";

const f3 = (n: number): string => n.toFixed(3);

const quick = process.argv.includes("--quick");
const here = dirname(fileURLToPath(import.meta.url));

/** What the tree would hold for an operation: the declaration a sync or a person would write. */
export function declarationOf(op: GithubOperation, suffix = ""): Record<string, unknown> {
  return {
    name: `${op.name}${suffix}`,
    title: op.summary,
    description: op.description === "" ? op.summary : `${op.summary}. ${op.description}`,
    snippet: op.summary,
    params: op.params,
    impl: { kind: "mcp", server: "github", tool: op.operationId },
  };
}

function indexOf(ops: GithubOperation[], copies = 1): ToolIndex {
  const index = createToolIndex();
  for (const b of createBuiltins())
    index.upsert(indexedToolOf(b.declaration.name, b.declaration) as IndexedTool);
  for (let c = 0; c < copies; c++)
    for (const op of ops) {
      const suffix = c === 0 ? "" : `-v${c}`;
      index.upsert(indexedToolOf(`${op.name}${suffix}`, declarationOf(op, suffix)) as IndexedTool);
    }
  return index;
}

interface Recall {
  at1: number;
  at5: number;
  at10: number;
  n: number;
}

function recall(index: ToolIndex, cases: Array<{ q: string; expect: string }>): Recall {
  let at1 = 0;
  let at5 = 0;
  let at10 = 0;
  for (const c of cases) {
    const names = index.search(c.q, { limit: 10 }).map((h) => h.name);
    const at = names.indexOf(c.expect);
    if (at === 0) at1++;
    if (at >= 0 && at < 5) at5++;
    if (at >= 0) at10++;
  }
  const n = cases.length;
  return { at1: at1 / n, at5: at5 / n, at10: at10 / n, n };
}

/**
 * Milliseconds from a declaration's write (on `writer`) until the live index over `reader` finds it:
 * one tree for LevelDB; for etcd, two trees on one prefix, as two servers would share it.
 */
async function writeDelay(writer: Tree, reader: Tree): Promise<number[]> {
  const live = createLiveToolIndex({ tree: reader });
  await live.ready;
  const delays: number[] = [];
  try {
    for (let i = 0; i < (quick ? 50 : 300); i++) {
      const name = `bench.tool${i}`;
      const t0 = performance.now();
      await writer.set(keys.tool(name), {
        kind: "json",
        value: {
          name,
          description: `zanzibar${i} quokka`,
          params: { type: "object" },
          impl: { kind: "builtin", ref: "edit.read" },
        },
      });
      while (live.index.search(`zanzibar${i}`, { limit: 1 })[0]?.name !== name)
        await new Promise((r) => setTimeout(r, 0));
      delays.push(performance.now() - t0);
    }
  } finally {
    live.close();
  }
  return delays;
}

async function levelDelay(): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-search-"));
  const tree = await openTree({ backend: "classic", location: join(dir, "db") });
  try {
    return await writeDelay(tree, tree);
  } finally {
    await tree.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function etcdDelay(): Promise<number[]> {
  const etcd = await startEtcd({ root: tmpdir() });
  const open = () => openTree({ backend: "etcd", endpoints: etcd.endpoints, prefix: "bench-search/" });
  const [a, b] = [await open(), await open()];
  try {
    return await writeDelay(a, b);
  } finally {
    await a.close();
    await b.close();
    await etcd.remove();
  }
}

/** Schema and system-prompt bytes of one step at `n` declared tools, in `all` and `deferred` mode. */
async function promptBytes(
  ops: GithubOperation[],
  n: number,
): Promise<{ all: [number, number]; deferred: [number, number] }> {
  const tree = await openTree({ backend: "memory" });
  const bs = await createByteseek({
    tree,
    workspace: tmpdir(),
    logger: pino({ level: "silent" }),
    env: {},
    sweep: false,
  });
  try {
    let written = 0;
    for (let c = 0; written < n; c++)
      for (const op of ops) {
        const suffix = c === 0 ? "" : `-v${c}`;
        if (written >= n) break;
        if (op.name.length + suffix.length > 64) continue; // a tool name is at most 64 characters
        written++;
        // GitHub's tools as a person's declarations (the github server's sync would write the same)
        const decl = {
          ...declarationOf(op, suffix),
          impl: { kind: "http", url: "https://api.github.com/", method: "GET" },
        };
        await bs.tree.set(keys.tool(`${op.name}${suffix}`), json(decl as Json));
      }
    const bytes = async (mode: "all" | "deferred"): Promise<[number, number]> => {
      const node = await bs.tree.get(POLICY_KEY);
      const policy = node?.kind === "json" ? (node.value.value as Record<string, Json>) : {};
      await bs.tree.set(POLICY_KEY, json({ ...policy, toolList: { mode } }), { force: true });
      const built = await bs.prompt("bench");
      return [Buffer.byteLength(JSON.stringify(built.tools)), Buffer.byteLength(built.system)];
    };
    return { all: await bytes("all"), deferred: await bytes("deferred") };
  } finally {
    await bs.close();
    await tree.close();
  }
}

async function main(): Promise<void> {
  const ops = githubOperations();
  const index = indexOf(ops);
  const generated = ops.map((op) => ({ q: generatedQuery(op), expect: op.name }));
  const paraphrases = JSON.parse(
    await readFile(join(here, "..", "..", "bench", "tool-search-queries.json"), "utf8"),
  ) as Array<{
    q: string;
    expect: string;
  }>;
  const g = recall(index, generated);
  const p = recall(index, paraphrases);
  console.log(`catalogue: ${index.size} tools (${ops.length} GitHub operations + the shipped tools)`);
  printTable(
    ["queries", "n", "recall@1", "recall@5", "recall@10", "bar @5"],
    [
      [
        "generated",
        String(g.n),
        f3(g.at1),
        f3(g.at5),
        f3(g.at10),
        g.at5 >= 0.85 ? "≥ 0.85: met" : "≥ 0.85: NOT met",
      ],
      [
        "paraphrases",
        String(p.n),
        f3(p.at1),
        f3(p.at5),
        f3(p.at10),
        p.at5 >= 0.7 ? "≥ 0.70: met" : "≥ 0.70: NOT met",
      ],
    ],
  );

  const copies = Math.ceil(10_000 / ops.length);
  const big = indexOf(ops, copies);
  const lat: number[] = [];
  const queries = [...generated.map((c) => c.q), ...paraphrases.map((c) => c.q)];
  for (let i = 0; i < (quick ? 500 : 3000); i++) {
    const q = queries[i % queries.length]!;
    const t0 = performance.now();
    big.search(q, { limit: 10 });
    lat.push(performance.now() - t0);
  }
  const level = await levelDelay();
  const etcd = await etcdDelay();
  printTable(
    ["figure", "p50 ms", "p99 ms", "bar"],
    [
      [
        `search at ${big.size} tools`,
        f3(percentile(lat, 50)),
        f3(percentile(lat, 99)),
        percentile(lat, 50) <= 2 ? "p50 ≤ 2 ms: met" : "p50 ≤ 2 ms: NOT met",
      ],
      ...(
        [
          ["LevelDB, one server", level],
          ["etcd, written on another server", etcd],
        ] as const
      ).map(([where, d]) => [
        `write → found (${where})`,
        f3(percentile([...d], 50)),
        f3(percentile([...d], 99)),
        percentile([...d], 99) <= 50 ? "p99 ≤ 50 ms: met" : "p99 ≤ 50 ms: NOT met",
      ]),
    ],
  );
}

async function bytesTable(ops: GithubOperation[]): Promise<void> {
  const rows: string[][] = [];
  for (const n of quick ? [10, 100, 1000] : [10, 100, 1000, 5000]) {
    const { all, deferred } = await promptBytes(ops, n);
    const saved = 1 - deferred[0] / all[0];
    rows.push([
      String(n),
      all[0].toLocaleString("en-US"),
      deferred[0].toLocaleString("en-US"),
      `${(saved * 100).toFixed(1)}%`,
      all[1].toLocaleString("en-US"),
      deferred[1].toLocaleString("en-US"),
      n === 1000 ? (saved >= 0.85 ? "≥ 85% fewer: met" : "≥ 85% fewer: NOT met") : "",
    ]);
  }
  printTable(
    [
      "declared tools",
      "schema bytes, all",
      "schema bytes, deferred",
      "saved",
      "system bytes, all",
      "system bytes, deferred",
      "bar",
    ],
    rows,
  );
}

await main();
await bytesTable(githubOperations());
