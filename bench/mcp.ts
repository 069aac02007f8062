/**
 * The MCP server's figures (issue 17): `tools/call` of a cheap builtin — `tree.get` of a small seeded
 * key (no-op-sized: one read; an existing tool, so the real `byteseek mcp` processes have it too) — through the official MCP clients, beside the same call through
 * `POST /v1/tools/tree.get/call` in the same run:
 * - the HTTP route (undici, keep-alive), MCP over Streamable HTTP with the 1.x SDK client (2025 era,
 *   a session) and the 2.x client (2026-07-28, stateless), and MCP over stdio to real
 *   `byteseek mcp` processes (each client its own process and store folder, as hosts run them);
 * - 1 and 16 concurrent clients: median and p99 latency, calls/s;
 * - the ratio of each MCP median to the route's median at the same concurrency, taken per round
 *   (median of the rounds' ratios), against the bar: ≤ 1.5×.
 * Run: npm run build && node dist/bench/mcp.js [--quick] [--rounds N]
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { pino } from "pino";
import { Pool } from "undici";
import { createByteseek } from "../agent/byteseek.js";
import { buildApp } from "../server/app.js";
import { openTree } from "../tree/index.js";
import { fmt, median, pairedRatio, percentile, printTable } from "./report.js";

const quick = process.argv.includes("--quick");
const roundsArg = process.argv.indexOf("--rounds");
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : quick ? 1 : 3;
/** Calls per client per contender per round. */
const CALLS = quick ? 100 : 1000;
const WARMUP = quick ? 20 : 100;
const CONCURRENCY = [1, 16] as const;
const BAR = 1.5;
/** A small value every fresh store has (seeded), so each stdio process reads the same. */
const KEY = "/byteseek/prompt/truncated";
const BIN = fileURLToPath(new URL("../cli/byteseek.js", import.meta.url));

/** One client of a contender: makes the call, answers whether it succeeded. */
type Caller = { call(): Promise<void>; close(): Promise<void> };
type Contender = { name: string; open(clients: number): Promise<Caller[]> };

function mcpCaller(client: {
  callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}): Caller {
  return {
    async call() {
      const r = (await client.callTool({ name: "tree_get", arguments: { key: KEY } })) as {
        isError?: boolean;
      };
      if (r.isError) throw new Error(`tools/call failed: ${JSON.stringify(r)}`);
    },
    close: () => client.close(),
  };
}

async function measure(callers: Caller[]): Promise<{ lat: number[]; perSec: number }> {
  for (const c of callers) for (let i = 0; i < WARMUP / callers.length + 1; i++) await c.call();
  const lat: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    callers.map(async (c) => {
      for (let i = 0; i < CALLS; i++) {
        const s = performance.now();
        await c.call();
        lat.push(performance.now() - s);
      }
    }),
  );
  return { lat, perSec: (callers.length * CALLS) / ((performance.now() - t0) / 1000) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-mcp-"));
  const tree = await openTree({ backend: "classic", location: join(dir, "db") });
  const logger = pino({ level: "silent" });
  const bs = await createByteseek({ tree, workspace: dir, logger, env: {}, sweep: false });
  const app = await buildApp({ tree, logger, runtime: bs.runtime, web: false });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const stores: string[] = [];
  const stdioEnv = async (): Promise<Record<string, string>> => {
    const store = join(dir, `stdio-${stores.length}`);
    stores.push(store);
    return { PATH: process.env.PATH ?? "", KVSPACE: store, BYTESEEK_WORKSPACE: dir };
  };

  const contenders: Contender[] = [
    {
      name: "POST /v1/tools/tree.get/call",
      async open(n) {
        const pool = new Pool(url, { connections: n });
        const body = JSON.stringify({ args: { key: KEY }, vid: "bench-route" });
        const one: Caller = {
          async call() {
            const res = await pool.request({
              method: "POST",
              path: "/v1/tools/tree.get/call",
              headers: { "content-type": "application/json" },
              body,
            });
            const r = (await res.body.json()) as { isError: boolean };
            if (r.isError) throw new Error("route call failed");
          },
          close: () => pool.close(),
        };
        return Array.from({ length: n }, (_, i) => (i === 0 ? one : { ...one, close: async () => {} }));
      },
    },
    {
      name: "MCP HTTP, 2025 session (sdk 1.x)",
      async open(n) {
        return Promise.all(
          Array.from({ length: n }, async () => {
            const c = new ClientV1({ name: "bench", version: "1" });
            await c.connect(new HttpV1(new URL(`${url}/mcp?vid=bench-http1`)));
            return mcpCaller(c);
          }),
        );
      },
    },
    {
      name: "MCP HTTP, 2026-07-28 (client 2.x)",
      async open(n) {
        return Promise.all(
          Array.from({ length: n }, async () => {
            const c = new ClientV2(
              { name: "bench", version: "2" },
              { versionNegotiation: { mode: { pin: "2026-07-28" } } },
            );
            await c.connect(new HttpV2(new URL(`${url}/mcp?vid=bench-http2`)));
            return mcpCaller(c);
          }),
        );
      },
    },
    {
      name: "MCP stdio, 2025 (sdk 1.x)",
      async open(n) {
        // One process at a time: 16 starting at once on a busy machine time their handshakes out.
        const callers: Caller[] = [];
        for (let i = 0; i < n; i++) {
          const c = new ClientV1({ name: "bench", version: "1" });
          await c.connect(
            new StdioV1({ command: process.execPath, args: [BIN, "mcp"], env: await stdioEnv() }),
          );
          callers.push(mcpCaller(c));
        }
        return callers;
      },
    },
    {
      name: "MCP stdio, 2026-07-28 (client 2.x)",
      async open(n) {
        // One process at a time: 16 starting at once on a busy machine time their handshakes out.
        const callers: Caller[] = [];
        for (let i = 0; i < n; i++) {
          const c = new ClientV2(
            { name: "bench", version: "2" },
            { versionNegotiation: { mode: { pin: "2026-07-28" } } },
          );
          await c.connect(
            new StdioV2({ command: process.execPath, args: [BIN, "mcp"], env: await stdioEnv() }),
          );
          callers.push(mcpCaller(c));
        }
        return callers;
      },
    },
  ];

  try {
    for (const clients of CONCURRENCY) {
      // Per contender: every round's latencies, and each round's median (for the paired ratio).
      const lat = contenders.map(() => [] as number[]);
      const rate = contenders.map(() => [] as number[]);
      const medians = contenders.map(() => [] as number[]);
      const opened: Caller[][] = [];
      for (const c of contenders) opened.push(await c.open(clients));
      try {
        for (let r = 0; r < ROUNDS; r++)
          for (const [i, callers] of opened.entries()) {
            const m = await measure(callers);
            lat[i]!.push(...m.lat);
            rate[i]!.push(m.perSec);
            medians[i]!.push(median(m.lat));
          }
      } finally {
        await Promise.allSettled(opened.flat().map((c) => c.close()));
      }
      console.log(
        `\n### ${clients} concurrent client${clients > 1 ? "s" : ""} (${CALLS} calls each, ${ROUNDS} round(s))\n`,
      );
      printTable(
        ["transport", "median ms", "p99 ms", "calls/s", "× route median", `bar ≤ ${BAR}×`],
        contenders.map((c, i) => {
          const x = pairedRatio(medians[i]!, medians[0]!);
          return [
            c.name,
            median(lat[i]!).toFixed(3),
            percentile(lat[i]!, 99).toFixed(3),
            fmt(median(rate[i]!)),
            i === 0 ? "1" : x.toFixed(2),
            i === 0 ? "—" : x <= BAR ? "met" : "MISSED",
          ];
        }),
      );
    }
  } finally {
    await app.close();
    await bs.close();
    await tree.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
