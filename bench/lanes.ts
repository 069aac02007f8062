/**
 * Each fast lane against its reference lane (tree/fast-lanes.ts), in the same run, rounds
 * interleaved (the order swapped each round, a warm-up round first): `npm run build && node
 * dist/bench/lanes.js [--rounds 3] [--count 2000] [--only http,mcp,etcd,relay,client]`. Prints this
 * process's CPU per operation for each lane (what the lane costs; the load generator, where there
 * is one, is the same on both sides and counted on both) and the fast lane's share of the reference.
 *
 * - http: plain GETs and PUTs of a 200-byte value through undici, to an app with the fast path and
 *   one without (fastify's routes), each on a memory tree.
 * - mcp: a plain 2026-era `tools/call` of tree.get answered by mcp/http.ts's fast lane (`plainCall`)
 *   and by the SDK's handler (`handle`), in process.
 * - etcd: tree writes (32 at a time) on one etcd through EtcdRpc and through etcd3's clients.
 * - relay: classifying an SDK request line and a result line, sniffed and parsed.
 * - client: the HTTP tree's sets and gets of a 200-byte value (tree/http/transport.ts: node:http
 *   against an undici pool), to one server with the fast path in this process.
 */
import { performance } from "node:perf_hooks";
import pino from "pino";
import { Pool } from "undici";
import { parseLine, sniffLine } from "../cli/mcp-relay.js";
import { createByteseek } from "../compose/byteseek.js";
import { createMcpHttp } from "../mcp/http.js";
import { createLiveTree } from "../mcp/live.js";
import { createMcpFactory } from "../mcp/server.js";
import { runtimeSource } from "../mcp/source.js";
import { buildApp } from "../server/app.js";
import { keys } from "../shared/keys.js";
import { createEtcdTree } from "../tree/etcd/index.js";
import { createHttpTree } from "../tree/http/index.js";
import { openTree } from "../tree/index.js";
import { startEtcd } from "./etcd-process.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg("rounds", 3);
const COUNT = arg("count", 2000);
const silent = pino({ level: "silent" });

/** CPU µs of this process per op for `run` doing `ops` operations. */
async function cpuPerOp(ops: number, run: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / ops;
}

async function inParallel(n: number, width: number, one: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await one(next++);
    }),
  );
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Runs `measure(lane)` for both lanes, round after round, the order swapped each round; a first
 * round warms both up and is not kept.
 */
async function interleaved(measure: (lane: 0 | 1) => Promise<number>): Promise<[number[], number[]]> {
  const results: [number[], number[]] = [[], []];
  for (let r = 0; r <= ROUNDS; r++)
    for (const lane of r % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
      const x = await measure(lane);
      if (r > 0) results[lane].push(x);
    }
  return results;
}

async function httpLane(): Promise<[number[], number[]]> {
  const value = JSON.stringify("x".repeat(200));
  const servers = await Promise.all(
    [true, false].map(async (fastPath) => {
      const app = await buildApp({
        tree: await openTree({ backend: "memory" }),
        logger: silent,
        web: false,
        fastPath,
      });
      const url = await app.listen({ host: "127.0.0.1", port: 0 });
      return { app, pool: new Pool(url, { connections: 8 }) };
    }),
  );
  const results = await interleaved((lane) => {
    const s = servers[lane]!;
    return cpuPerOp(COUNT * 2, () =>
      inParallel(COUNT, 8, async (n) => {
        const path = `/v1/tree/bench/k${n % 500}`;
        const put = await s.pool.request({
          path,
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: value,
        });
        await put.body.dump();
        const get = await s.pool.request({ path, method: "GET" });
        await get.body.dump();
      }),
    );
  });
  for (const s of servers) {
    await s.pool.close();
    await s.app.close();
  }
  return results;
}

async function mcpLane(): Promise<[number[], number[]]> {
  const tree = await openTree({ backend: "memory" });
  const bs = await createByteseek({ tree, workspace: process.cwd(), logger: silent, env: {}, sweep: false });
  const live = createLiveTree(tree, silent);
  const factory = createMcpFactory({ source: runtimeSource(tree, bs.runtime), logger: silent, live });
  const mcp = createMcpHttp({ factory, live, logger: silent, fast: true });
  const headers = {
    host: "127.0.0.1:1",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "tree_get",
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const body = {
    method: "tools/call",
    params: {
      name: "tree_get",
      arguments: { key: keys.prompt("truncated") },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
    jsonrpc: "2.0",
    id: 1,
  };
  const calls = Math.max(200, Math.floor(COUNT / 4));
  const lanes = [
    () => mcp.plainCall("POST", headers, body, "bench", new AbortController().signal) as Promise<string>,
    async () => {
      const res = await mcp.handle(
        new Request("http://127.0.0.1:1/mcp", { method: "POST", headers }),
        body,
        "bench",
      );
      return res.text();
    },
  ];
  const results = await interleaved((lane) =>
    cpuPerOp(calls, () => inParallel(calls, 4, async () => void (await lanes[lane]!()))),
  );
  await mcp.close();
  live.close();
  await bs.close();
  await tree.close();
  return results;
}

async function etcdLane(): Promise<[number[], number[]]> {
  const etcd = await startEtcd();
  const trees = [
    await createEtcdTree({ endpoints: etcd.endpoints, prefix: "fast/", fast: true }),
    await createEtcdTree({ endpoints: etcd.endpoints, prefix: "reference/", fast: false }),
  ];
  const writes = Math.max(500, Math.floor(COUNT / 2));
  try {
    return await interleaved((lane) =>
      cpuPerOp(writes, () =>
        inParallel(writes, 32, async (n) => {
          await trees[lane]!.set(`/bench/k${n % 500}`, { kind: "char/utf8", value: "x".repeat(200) });
        }),
      ),
    );
  } finally {
    for (const t of trees) await t.close();
    await etcd.remove();
  }
}

async function relayLane(): Promise<[number[], number[]]> {
  const lines = [
    `{"method":"tools/call","params":{"name":"tree_get","arguments":{"key":"${keys.prompt("truncated")}"}},"jsonrpc":"2.0","id":41}`,
    `{"result":{"content":[{"type":"text","text":"${"v".repeat(300)}"}],"isError":false},"jsonrpc":"2.0","id":41}`,
  ];
  const n = COUNT * 50;
  return interleaved(async (lane) => {
    const classify = [sniffLine, parseLine][lane]!;
    const start = performance.now();
    for (let k = 0; k < n; k++) classify(lines[k & 1]!, k & 1 ? "holder" : "client");
    return ((performance.now() - start) * 1000) / n;
  });
}

async function clientLane(): Promise<[number[], number[]]> {
  const app = await buildApp({ tree: await openTree({ backend: "memory" }), logger: silent, web: false });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const clients = [
    createHttpTree({ url, transport: "node", connections: 8 }),
    createHttpTree({ url, transport: "undici", connections: 8 }),
  ];
  const value = { kind: "char/utf8", value: "x".repeat(200) } as const;
  try {
    return await interleaved((lane) =>
      cpuPerOp(COUNT * 2, () =>
        inParallel(COUNT, 8, async (n) => {
          await clients[lane]!.set(`/bench/k${n % 500}`, value);
          await clients[lane]!.get(`/bench/k${n % 500}`);
        }),
      ),
    );
  } finally {
    for (const c of clients) await c.close();
    await app.close();
  }
}

const LANES: Array<[string, string, () => Promise<[number[], number[]]>]> = [
  ["http", "CPU µs per request (GET or PUT, client included)", httpLane],
  ["mcp", "CPU µs per tools/call (in process)", mcpLane],
  ["etcd", "CPU µs per tree write (32 at a time; etcd's own CPU not counted)", etcdLane],
  ["relay", "µs per line classified", relayLane],
  ["client", "CPU µs per HTTP tree request (set or get, server included)", clientLane],
];

const only = process.argv.includes("--only")
  ? process.argv[process.argv.indexOf("--only") + 1]!.split(",")
  : undefined;
console.log(`| lane | measure | fast | reference | fast / reference |\n| --- | --- | --- | --- | --- |`);
for (const [name, what, run] of LANES) {
  if (only && !only.includes(name)) continue;
  const [fast, reference] = await run();
  const [f, ref] = [median(fast), median(reference)];
  console.log(`| ${name} | ${what} | ${f.toFixed(1)} | ${ref.toFixed(1)} | ${(f / ref).toFixed(2)} |`);
}
