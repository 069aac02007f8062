/**
 * The MCP server's figures (issue 17): `tools/call` of a cheap builtin — `tree.get` of a small seeded
 * key (no-op-sized: one read; an existing tool, so the real `byteseek mcp` processes have it too) —
 * beside the same call through `POST /v1/tools/tree.get/call` in the same run:
 * - the HTTP route (undici, keep-alive); MCP over Streamable HTTP with the official clients — the
 *   1.x SDK (2025 era, a session) and the 2.x client (2026-07-28, stateless); the same two again
 *   with the route's client: each official client's own tools/call request (headers and body, its
 *   session for 2025) captured through its `fetch` option and replayed through undici with a fresh
 *   id; and MCP over stdio to real `byteseek mcp` processes, one per client as hosts run them: each
 *   with its own store folder (clients in different projects), and all on one folder (sessions of
 *   one project: the first holds it, the others relay to it);
 * - 1 and 16 concurrent clients: median and p99 latency, calls/s;
 * - the ratio of each MCP median to the route's median at the same concurrency, taken per round
 *   (median of the rounds' ratios), against the bar: ≤ 1.5×. Over HTTP the bar is judged on the
 *   same-client rows: the official HTTP clients spend several times undici's CPU per call, which
 *   says nothing of the server; their rows are printed beside.
 * - where the time goes: the server runs in its own process (forked from this script; the stdio
 *   servers are their own processes anyway), so CPU time per call splits into the server's and the
 *   client's (this process).
 * Every wait is bounded (a client's connection, each call, the server's answers): a child that
 * never answers ends the run with a message and exit code 1, every process it started ended.
 * Run: npm run build && node dist/bench/mcp.js [--quick] [--rounds N] [--clients N]
 *      [--only route,http1,http2,raw1,raw2,stdio1,stdio2,shared1,shared2]
 *      [--server-prof DIR] (CPU-profiles the server process into DIR, for a flame graph)
 *      [--stdio-prof DIR] (CPU-profiles every `byteseek mcp` stdio process into DIR)
 * Over 400 lines: nine contenders' set-up, capture and clean-up, kept beside the one loop that
 * measures them all.
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
import { createByteseek } from "../compose/byteseek.js";
import { buildApp } from "../server/app.js";
import { keys } from "../shared/keys.js";
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
/**
 * The official clients over HTTP: shown (what users run), but the bar is judged on the same
 * requests sent by the route's client (undici), since the SDK clients' own CPU differs from it.
 */
const OFFICIAL_HTTP = new Set(["http1", "http2"]);
/** A small value every fresh store has (seeded), so each stdio process reads the same. */
const KEY = keys.prompt("truncated");
const BIN = fileURLToPath(new URL("../cli/byteseek.js", import.meta.url));
/** Clock ticks per second of /proc/<pid>/stat (Linux's USER_HZ, 100 everywhere it runs). */
const USER_HZ = 100;

/** Bounds on every wait, so a child that never answers ends the bench with a message instead of a hang. */
const CONNECT_MS = 60_000;
const CALL_MS = 60_000;
const IPC_MS = 30_000;
const CLOSE_MS = 15_000;

/** `p`, or a rejection naming `what` once `ms` have passed. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Everything the bench opened (clients, their connections and child processes), closed at the end
 * whatever happened — a stdio child left running would keep this process alive.
 */
const closers: Array<() => Promise<unknown>> = [];
function closing<T extends { close(): Promise<unknown> }>(x: T): T {
  closers.push(() => x.close());
  return x;
}
async function closeAll(): Promise<void> {
  const all = closers.splice(0);
  await Promise.allSettled(all.map((close) => within(close(), CLOSE_MS, "closing a client")));
}

/** One client of a contender (closed through `closers`). */
type Caller = { call(): Promise<void> };
/** What a contender opened: its clients, and the CPU time (µs) of the process(es) serving them. */
type Opened = { callers: Caller[]; serverCpu(): Promise<number> };
type Contender = { key: string; name: string; open(clients: number): Promise<Opened> };

function mcpCaller(client: {
  callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
}): Caller {
  return {
    async call() {
      const r = (await within(
        client.callTool({ name: "tree_get", arguments: { key: KEY } }),
        CALL_MS,
        "an MCP tools/call",
      )) as { isError?: boolean };
      if (r.isError) throw new Error(`tools/call failed: ${JSON.stringify(r)}`);
    },
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
function replaying(sent: Sent): Caller {
  const url = new URL(sent.url);
  const pool = closing(new Pool(url.origin, { connections: 1 }));
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
        headersTimeout: CALL_MS,
        bodyTimeout: CALL_MS,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200)
        throw new Error(`tools/call answered ${res.statusCode}: ${text.slice(0, 300)}`);
      if (rpcResult(String(res.headers["content-type"] ?? ""), text).isError)
        throw new Error(`tools/call failed: ${text.slice(0, 300)}`);
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
  // The bench gone (finished, failed or killed): nothing to serve.
  process.on("disconnect", () => process.exit(0));
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
  const url = await within(
    new Promise<string>((res, rej) => {
      child.once("error", rej);
      child.once("exit", (code) => rej(new Error(`the bench server exited (${code})`)));
      child.on("message", function first(m: { url?: string }) {
        if (m.url) res(m.url);
      });
    }),
    CONNECT_MS,
    "starting the bench server",
  ).catch((err) => {
    child.kill("SIGKILL");
    throw err;
  });
  let asked = 0;
  return {
    url,
    cpu() {
      const id = ++asked;
      return within(
        new Promise((res) => {
          const on = (m: { cpu?: number; us?: number }) => {
            if (m.cpu !== id) return;
            child.off("message", on);
            res(m.us ?? Number.NaN);
          };
          child.on("message", on);
          child.send({ cpu: id });
        }),
        IPC_MS,
        "the bench server's CPU time",
      );
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((res) => child.once("exit", res));
      child.send({ stop: true });
      await within(gone, CLOSE_MS, "stopping the bench server").catch((err) => {
        child.kill("SIGKILL");
        throw err;
      });
    },
  };
}

async function main(): Promise<void> {
  const profDir = arg("--server-prof");
  const stdioProf = arg("--stdio-prof");
  /** How a `byteseek mcp` stdio process is started (profiled with `--stdio-prof`). */
  const mcpArgs = [...(stdioProf ? ["--cpu-prof", `--cpu-prof-dir=${stdioProf}`] : []), BIN, "mcp"];
  const only = arg("--only")?.split(",");
  const server = await startServer(profDir);
  const { url } = server;
  const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-mcp-stdio-"));
  let stores = 0;
  const stdioEnv = (store: string): Record<string, string> => ({
    PATH: process.env.PATH ?? "",
    KVSPACE: store,
    BYTESEEK_WORKSPACE: dir,
  });
  /**
   * `byteseek mcp` processes, one per client: each with a store folder of its own (clients in
   * different projects), or all on one (sessions of one project: the first holds the folder, the
   * others relay to it, mcp/share.ts).
   */
  const stdioRow = (key: string, name: string, sdk: 1 | 2, shared: boolean): Contender => ({
    key,
    name,
    async open(n) {
      // One process at a time: 16 starting at once on a busy machine time their handshakes out.
      const callers: Caller[] = [];
      const pids: Array<number | null> = [];
      const one = join(dir, `stdio-${stores++}`);
      for (let i = 0; i < n; i++) {
        const env = stdioEnv(shared ? one : join(dir, `stdio-${stores++}`));
        const c =
          sdk === 1
            ? new ClientV1({ name: "bench", version: "1" })
            : new ClientV2(
                { name: "bench", version: "2" },
                { versionNegotiation: { mode: { pin: "2026-07-28" } } },
              );
        // The transport is closed too: a child that never answered initialize is ended with it.
        const t = closing(
          sdk === 1
            ? new StdioV1({ command: process.execPath, args: mcpArgs, env })
            : new StdioV2({ command: process.execPath, args: mcpArgs, env }),
        );
        closing(c);
        await within(c.connect(t), CONNECT_MS, `starting byteseek mcp ${i + 1} of ${n} (${sdk}.x client)`);
        pids.push(t.pid);
        callers.push(mcpCaller(c));
      }
      return { callers, serverCpu: () => sumCpu(pids) };
    },
  });
  const sumCpu = async (pids: Array<number | null>) =>
    (await Promise.all(pids.map(procCpu))).reduce((a, b) => a + b, 0);
  const http = async (callers: Array<Promise<Caller>> | Caller[]): Promise<Opened> => ({
    callers: await Promise.all(callers),
    serverCpu: server.cpu,
  });
  type Official = Parameters<typeof mcpCaller>[0];
  const httpV1 = async (fetch?: typeof globalThis.fetch): Promise<Official> => {
    const c = closing(new ClientV1({ name: "bench", version: "1" }));
    await within(
      c.connect(new HttpV1(new URL(`${url}/mcp?vid=bench-http1`), fetch ? { fetch } : {})),
      CONNECT_MS,
      "connecting the 1.x client over HTTP",
    );
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
    return replaying(cap.last());
  };

  const all: Contender[] = [
    {
      key: "route",
      name: "POST /v1/tools/tree.get/call",
      async open(n) {
        const pool = closing(new Pool(url, { connections: n }));
        const body = JSON.stringify({ args: { key: KEY }, vid: "bench-route" });
        const one: Caller = {
          async call() {
            const res = await pool.request({
              method: "POST",
              path: "/v1/tools/tree.get/call",
              headers: { "content-type": "application/json" },
              body,
              headersTimeout: CALL_MS,
              bodyTimeout: CALL_MS,
            });
            const r = (await res.body.json()) as { isError: boolean };
            if (r.isError) throw new Error("route call failed");
          },
        };
        return http(Array.from({ length: n }, () => one));
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
    stdioRow("stdio1", "MCP stdio, 2025 (sdk 1.x)", 1, false),
    stdioRow("stdio2", "MCP stdio, 2026-07-28 (client 2.x)", 2, false),
    stdioRow("shared1", "MCP stdio, 2025 (sdk 1.x), one store folder", 1, true),
    stdioRow("shared2", "MCP stdio, 2026-07-28 (client 2.x), one store folder", 2, true),
  ];
  // Every ratio is taken against the route: without it (`--only` not naming it, to profile MCP alone) there are none.
  const contenders = all.filter((c) => only === undefined || only.includes(c.key));
  const base = contenders[0]?.key === "route" ? 0 : -1;

  try {
    for (const clients of CONCURRENCY) {
      const runs = contenders.map(() => [] as Measured[]);
      const opened: Opened[] = [];
      try {
        for (const c of contenders) {
          const t0 = performance.now();
          opened.push(await c.open(clients));
          console.error(`opened ${c.key} × ${clients} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        }
        for (let r = 0; r < ROUNDS; r++)
          for (const [i, o] of opened.entries()) runs[i]!.push(await measure(o));
      } finally {
        await closeAll();
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
          `bar ≤ ${BAR}×`,
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
            i === base || base < 0
              ? "—"
              : OFFICIAL_HTTP.has(c.key)
                ? "(see the same-client row)"
                : x <= BAR
                  ? "met"
                  : "MISSED",
            fmt(median(of(i, (m) => m.serverUs))),
            fmt(median(of(i, (m) => m.clientUs))),
            i === base ? "1" : sx.toFixed(2),
          ];
        }),
      );
    }
    console.log(
      "\nThe bar (an MCP call costs ≤ 1.5× the route's median) is judged on the end-to-end ratio (× route median) of the rows whose client is the route's own: the official clients' captured bytes through undici over HTTP, and stdio (the official clients, whose CPU per call is below undici's). The official HTTP clients' rows are shown beside them. Server CPU is the serving process(es)' CPU time per call (the forked app for the route and MCP over HTTP, the `byteseek mcp` processes for stdio); client CPU is this process's.",
    );
  } finally {
    await closeAll();
    await server.stop().catch((err: Error) => console.error(err.message));
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes("--serve")) await serve();
else {
  // Whatever failed, say what and exit non-zero: nothing left open may keep the bench waiting.
  const code = await main().then(
    () => 0,
    (err: Error) => {
      console.error(`bench/mcp failed: ${err.message}`);
      return 1;
    },
  );
  process.exit(code);
}
