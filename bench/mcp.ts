/**
 * The MCP server's figures (issue 17): `tools/call` of a cheap builtin — `tree.get` of a small seeded
 * key (no-op-sized: one read; an existing tool, so the real `byteseek mcp` processes have it too) — through the official MCP clients, beside the same call through
 * `POST /v1/tools/tree.get/call` in the same run:
 * - the HTTP route (undici, keep-alive), MCP over Streamable HTTP with the 1.x SDK client (2025 era,
 *   a session) and the 2.x client (2026-07-28, stateless), and MCP over stdio to real
 *   `byteseek mcp` processes (each client its own process and store folder, as hosts run them);
 * - 1 and 16 concurrent clients: median and p99 latency, calls/s;
 * - the ratio of each MCP median to the route's median at the same concurrency, taken per round
 *   (median of the rounds' ratios), against the bar: ≤ 1.5×. The bar is judged on this end-to-end
 *   ratio ("an MCP call costs"), client included.
 * - where the time goes: the server runs in its own process (forked from this script; the stdio
 *   servers are their own processes anyway), so CPU time per call splits into the server's and the
 *   client's (this process: the official SDK clients, or undici for the route). The server-side
 *   ratio (MCP server CPU per call ÷ the route server's) is the fair comparison of the two servers,
 *   since the route is driven by a bare HTTP client and MCP by the SDK's; it is printed beside the
 *   bar, not instead of it.
 * Run: npm run build && node dist/bench/mcp.js [--quick] [--rounds N] [--only route,http1,...]
 *      [--server-prof DIR] (CPU-profiles the server process into DIR, for a flame graph)
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
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
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = arg("--rounds") ? Number(arg("--rounds")) : quick ? 1 : 3;
/** Calls per client per contender per round. */
const CALLS = quick ? 100 : 1000;
const WARMUP = quick ? 20 : 100;
const CONCURRENCY = arg("--clients") ? [Number(arg("--clients"))] : [1, 16];
const BAR = 1.5;
/** A small value every fresh store has (seeded), so each stdio process reads the same. */
const KEY = "/byteseek/prompt/truncated";
const BIN = fileURLToPath(new URL("../cli/byteseek.js", import.meta.url));
/** Clock ticks per second of /proc/<pid>/stat (Linux's USER_HZ, 100 everywhere it runs). */
const USER_HZ = 100;

/** One client of a contender. */
type Caller = { call(): Promise<void>; close(): Promise<void> };
/** What a contender opened: its clients, and the CPU time (µs) of the process(es) serving them. */
type Opened = { callers: Caller[]; serverCpu(): Promise<number> };
type Contender = { key: string; name: string; open(clients: number): Promise<Opened> };

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

/** A request as the official client's fetch sent it. */
interface Sent {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A `fetch` for an official client's transport that keeps the last `tools/call` request it sends
 * (after the client's own headers are set), so the same bytes can be replayed through undici.
 */
function capturing(): { fetch: typeof fetch; last(): Sent } {
  let sent: Sent | undefined;
  return {
    fetch: async (input, init) => {
      if (typeof init?.body === "string" && init.body.includes('"tools/call"')) {
        const headers: Record<string, string> = {};
        new Headers(init.headers).forEach((v, k) => {
          headers[k] = v;
        });
        sent = { url: String(input instanceof Request ? input.url : input), headers, body: init.body };
      }
      return fetch(input, init);
    },
    last() {
      if (sent === undefined) throw new Error("the official client sent no tools/call to capture");
      return sent;
    },
  };
}

/** Headers undici sets itself (framing, connection), left out of a replayed request. */
const FRAMING = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);

/** The result of a JSON-RPC answer, as a JSON body or the one `data:` event of an SSE stream. */
function rpcResult(contentType: string, text: string): { isError?: boolean } {
  const json = contentType.startsWith("text/event-stream")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .filter((d) => d.includes('"result"') || d.includes('"error"'))
        .at(-1)
    : text;
  const msg = JSON.parse(json ?? "{}") as { result?: { isError?: boolean }; error?: unknown };
  if (msg.result === undefined) throw new Error(`tools/call failed: ${text.slice(0, 300)}`);
  return msg.result;
}

/** A caller that replays `sent` (a fresh JSON-RPC id each time) on its own keep-alive connection. */
function replaying(sent: Sent, close: () => Promise<void>): Caller {
  const url = new URL(sent.url);
  const pool = new Pool(url.origin, { connections: 1 });
  const headers = Object.fromEntries(Object.entries(sent.headers).filter(([k]) => !FRAMING.has(k)));
  const message = JSON.parse(sent.body) as { id: number | string };
  let id = 1_000_000;
  return {
    async call() {
      const res = await pool.request({
        method: "POST",
        path: url.pathname + url.search,
        headers,
        // The client's bytes with a fresh id (the key keeps its place).
        body: JSON.stringify({ ...message, id: id++ }),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`tools/call answered ${res.statusCode}: ${text.slice(0, 300)}`);
      if (rpcResult(String(res.headers["content-type"] ?? ""), text).isError)
        throw new Error(`tools/call failed: ${text.slice(0, 300)}`);
    },
    async close() {
      await pool.close();
      await close();
    },
  };
}

/** CPU time (µs) a process has used, from /proc (the stdio servers are not ours to ask). */
async function procCpu(pid: number | null): Promise<number> {
  if (pid === null) return Number.NaN;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces, so split after its closing paren): utime is 14th, stime 15th.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1e6) / USER_HZ;
  } catch {
    return Number.NaN;
  }
}

const ownCpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

interface Measured {
  lat: number[];
  perSec: number;
  /** CPU µs per call: the serving process(es), and this one (the clients). */
  serverUs: number;
  clientUs: number;
}

async function measure(opened: Opened): Promise<Measured> {
  const { callers } = opened;
  for (const c of callers) for (let i = 0; i < WARMUP / callers.length + 1; i++) await c.call();
  const lat: number[] = [];
  const s0 = await opened.serverCpu();
  const c0 = ownCpu();
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
  const wall = performance.now() - t0;
  const clientUs = ownCpu() - c0;
  const serverUs = (await opened.serverCpu()) - s0;
  const n = callers.length * CALLS;
  return { lat, perSec: n / (wall / 1000), serverUs: serverUs / n, clientUs: clientUs / n };
}

/** The server's side, run in its own process (`--serve`): the app on loopback, its CPU on request. */
async function serve(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-mcp-"));
  const tree = await openTree({ backend: "classic", location: join(dir, "db") });
  const logger = pino({ level: "silent" });
  const bs = await createByteseek({ tree, workspace: dir, logger, env: {}, sweep: false });
  const app = await buildApp({ tree, logger, runtime: bs.runtime, web: false });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  process.on("message", (m: { cpu?: number; stop?: boolean }) => {
    if (m.cpu !== undefined) process.send?.({ cpu: m.cpu, us: ownCpu() });
    if (m.stop)
      void (async () => {
        await app.close();
        await bs.close();
        await tree.close();
        await rm(dir, { recursive: true, force: true });
        process.exit(0);
      })();
  });
  process.send?.({ url });
}

interface ServerProcess {
  url: string;
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

async function startServer(profDir: string | undefined): Promise<ServerProcess> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["--serve"], {
    execArgv: profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const url = await new Promise<string>((res, rej) => {
    child.once("error", rej);
    child.once("exit", (code) => rej(new Error(`the bench server exited (${code})`)));
    child.on("message", function first(m: { url?: string }) {
      if (m.url) res(m.url);
    });
  });
  let asked = 0;
  return {
    url,
    cpu() {
      const id = ++asked;
      return new Promise((res) => {
        const on = (m: { cpu?: number; us?: number }) => {
          if (m.cpu !== id) return;
          child.off("message", on);
          res(m.us ?? Number.NaN);
        };
        child.on("message", on);
        child.send({ cpu: id });
      });
    },
    async stop() {
      const gone = new Promise((res) => child.once("exit", res));
      child.send({ stop: true });
      await gone;
    },
  };
}

async function main(): Promise<void> {
  const profDir = arg("--server-prof");
  const only = arg("--only")?.split(",");
  const server = await startServer(profDir);
  const { url } = server;
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-mcp-stdio-"));
  let stores = 0;
  const stdioEnv = (): Record<string, string> => ({
    PATH: process.env.PATH ?? "",
    KVSPACE: join(dir, `stdio-${stores++}`),
    BYTESEEK_WORKSPACE: dir,
  });
  const sumCpu = async (pids: Array<number | null>) =>
    (await Promise.all(pids.map(procCpu))).reduce((a, b) => a + b, 0);
  const http = async (callers: Array<Promise<Caller>> | Caller[]): Promise<Opened> => ({
    callers: await Promise.all(callers),
    serverCpu: server.cpu,
  });
  type Official = { callTool: Parameters<typeof mcpCaller>[0]["callTool"]; close(): Promise<void> };
  const httpV1 = async (fetch?: typeof globalThis.fetch): Promise<Official> => {
    const c = new ClientV1({ name: "bench", version: "1" });
    await c.connect(new HttpV1(new URL(`${url}/mcp?vid=bench-http1`), fetch ? { fetch } : {}));
    return c;
  };
  const httpV2 = async (fetch?: typeof globalThis.fetch): Promise<Official> => {
    const c = new ClientV2(
      { name: "bench", version: "2" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await c.connect(new HttpV2(new URL(`${url}/mcp?vid=bench-http2`), fetch ? { fetch } : {}));
    return c;
  };
  /**
   * An official client's tools/call, captured and replayed through undici: the same bytes (its
   * session, for the 2025 era, kept open by the client) with the route's HTTP client, so the
   * two servers are compared with the same client cost on both sides.
   */
  const replayed = async (
    official: (fetch: typeof globalThis.fetch) => Promise<Official>,
  ): Promise<Caller> => {
    const cap = capturing();
    const c = await official(cap.fetch);
    await mcpCaller(c).call();
    return replaying(cap.last(), () => c.close());
  };

  const all: Contender[] = [
    {
      key: "route",
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
        return http(Array.from({ length: n }, (_, i) => (i === 0 ? one : { ...one, close: async () => {} })));
      },
    },
    {
      key: "http1",
      name: "MCP HTTP, 2025 session (sdk 1.x)",
      open: (n) => http(Array.from({ length: n }, () => httpV1()).map(async (c) => mcpCaller(await c))),
    },
    {
      key: "http2",
      name: "MCP HTTP, 2026-07-28 (client 2.x)",
      open: (n) => http(Array.from({ length: n }, () => httpV2()).map(async (c) => mcpCaller(await c))),
    },
    {
      key: "raw1",
      name: "MCP HTTP, 2025 session, sdk 1.x's bytes via undici",
      open: (n) => http(Array.from({ length: n }, () => replayed(httpV1))),
    },
    {
      key: "raw2",
      name: "MCP HTTP, 2026-07-28, client 2.x's bytes via undici",
      open: (n) => http(Array.from({ length: n }, () => replayed(httpV2))),
    },
    {
      key: "stdio1",
      name: "MCP stdio, 2025 (sdk 1.x)",
      async open(n) {
        // One process at a time: 16 starting at once on a busy machine time their handshakes out.
        const callers: Caller[] = [];
        const pids: Array<number | null> = [];
        for (let i = 0; i < n; i++) {
          const c = new ClientV1({ name: "bench", version: "1" });
          const t = new StdioV1({ command: process.execPath, args: [BIN, "mcp"], env: stdioEnv() });
          await c.connect(t);
          pids.push(t.pid);
          callers.push(mcpCaller(c));
        }
        return { callers, serverCpu: () => sumCpu(pids) };
      },
    },
    {
      key: "stdio2",
      name: "MCP stdio, 2026-07-28 (client 2.x)",
      async open(n) {
        const callers: Caller[] = [];
        const pids: Array<number | null> = [];
        for (let i = 0; i < n; i++) {
          const c = new ClientV2(
            { name: "bench", version: "2" },
            { versionNegotiation: { mode: { pin: "2026-07-28" } } },
          );
          const t = new StdioV2({ command: process.execPath, args: [BIN, "mcp"], env: stdioEnv() });
          await c.connect(t);
          pids.push(t.pid);
          callers.push(mcpCaller(c));
        }
        return { callers, serverCpu: () => sumCpu(pids) };
      },
    },
  ];
  // Every ratio is taken against the route: without it (`--only` not naming it, to profile MCP alone) there are none.
  const contenders = all.filter((c) => only === undefined || only.includes(c.key));
  const base = contenders[0]?.key === "route" ? 0 : -1;

  try {
    for (const clients of CONCURRENCY) {
      const runs = contenders.map(() => [] as Measured[]);
      const opened: Opened[] = [];
      for (const c of contenders) opened.push(await c.open(clients));
      try {
        for (let r = 0; r < ROUNDS; r++)
          for (const [i, o] of opened.entries()) runs[i]!.push(await measure(o));
      } finally {
        await Promise.allSettled(opened.flatMap((o) => o.callers.map((c) => c.close())));
      }
      console.log(
        `\n### ${clients} concurrent client${clients > 1 ? "s" : ""} (${CALLS} calls each, ${ROUNDS} round(s))\n`,
      );
      const of = (i: number, f: (m: Measured) => number) => runs[i]!.map(f);
      printTable(
        [
          "transport",
          "median ms",
          "p99 ms",
          "calls/s",
          "× route median",
          `bar ≤ ${BAR}× (end to end)`,
          "server CPU µs/call",
          "client CPU µs/call",
          "× route server CPU",
        ],
        contenders.map((c, i) => {
          const x = pairedRatio(
            of(i, (m) => median(m.lat)),
            of(0, (m) => median(m.lat)),
          );
          const sx = pairedRatio(
            of(i, (m) => m.serverUs),
            of(0, (m) => m.serverUs),
          );
          return [
            c.name,
            median(runs[i]!.flatMap((m) => m.lat)).toFixed(3),
            percentile(
              runs[i]!.flatMap((m) => m.lat),
              99,
            ).toFixed(3),
            fmt(median(of(i, (m) => m.perSec))),
            i === base ? "1" : x.toFixed(2),
            i === base || base < 0 ? "—" : x <= BAR ? "met" : "MISSED",
            fmt(median(of(i, (m) => m.serverUs))),
            fmt(median(of(i, (m) => m.clientUs))),
            i === base ? "1" : sx.toFixed(2),
          ];
        }),
      );
    }
    console.log(
      "\nThe bar is judged on the end-to-end ratio (× route median). Server CPU is the serving process(es)' CPU time per call (the forked app for the route and MCP over HTTP, the `byteseek mcp` processes for stdio); client CPU is this process's (the SDK clients, or undici for the route).",
    );
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes("--serve")) await serve();
else await main();
