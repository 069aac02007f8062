/**
 * Where a PUT through byteseek on etcd goes (issue 19), counted rather than timed: etcd calls per
 * request (transactions, ranges), PUTs per transaction (group commit), nested transactions whose
 * compares failed and the keys those compares named, and CPU µs per request of byteseek's process
 * and of etcd's — for a fixed number of random-key PUTs over 10,000 pre-written keys, as
 * bench/http.js `--etcd` loads them. On a loaded machine req/s drift; counts and CPU per request
 * are what an A/B compares.
 *
 *   npm run build && node dist/bench/etcd-probe.js [--count N] [--rounds R] [--only x1,x32,two,gw1,gw32]
 *
 * Phases: gw1/gw32 the etcd v3 gateway at 1/32 connections; x1, x8, x16, x32, x64 one byteseek
 * server at that many; two and two64 both servers, 32 and 64 connections split between them.
 *
 * Each server runs in a child process (this file with `--serve`) that counts its etcd calls by
 * wrapping etcd3's KVClient and the tree's EtcdRpc; the parent asks it for the counts over IPC.
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { freePort, startEtcd } from "./etcd-process.js";

const KEYS = 10_000;
const VALUE = JSON.stringify("v".repeat(200));

interface Stats {
  txn: number;
  range: number;
  other: number;
  failed: number;
  failedKeys: Record<string, number>;
  cpuUs: number;
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function serve(): Promise<void> {
  const etcd3 = await import("etcd3");
  const { EtcdRpc } = await import("../tree/etcd/rpc.js");
  const { startServer } = await import("../server/main.js");
  const s: Stats = { txn: 0, range: 0, other: 0, failed: 0, failedKeys: {}, cpuUs: 0 };
  // The tree's hot calls go through EtcdRpc, the rest through etcd3's KVClient: both counted.
  const methods = [
    ...["range", "put", "deleteRange", "compact", "txn"].map((name) => ({
      name,
      proto: etcd3.KVClient.prototype,
    })),
    ...["range", "txn"].map((name) => ({ name, proto: EtcdRpc.prototype })),
  ];
  for (const { name, proto: p } of methods) {
    const proto = p as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    const orig = proto[name]!;
    proto[name] = async function (this: unknown, ...args: unknown[]) {
      const req = args[0] as {
        compare?: Array<{ key: Buffer }>;
        success?: Array<{ request_txn?: { compare: Array<{ key: Buffer }> } }>;
      };
      const res = (await orig.apply(this, args)) as {
        succeeded?: boolean;
        responses?: Array<{ response_txn?: { succeeded: boolean } }>;
      };
      if (name === "txn") {
        s.txn++;
        const nested = req.success?.filter((op) => op.request_txn) ?? [];
        const note = (compare: Array<{ key: Buffer }> | undefined) => {
          s.failed++;
          for (const c of compare ?? []) {
            const k = c.key.toString("utf8");
            s.failedKeys[k] = (s.failedKeys[k] ?? 0) + 1;
          }
        };
        if (nested.length > 0) {
          res.responses?.forEach((r, i) => {
            if (r.response_txn && !r.response_txn.succeeded) note(req.success?.[i]?.request_txn?.compare);
          });
        } else if ((req.compare?.length ?? 0) > 0 || req.success?.some((op) => !("request_range" in op))) {
          if (!res.succeeded) note(req.compare);
        } else s.range++; // a transaction of ranges is a read
      } else if (name === "range") s.range++;
      else s.other++;
      return res;
    };
  }
  // Logs go where bench/http.ts sends them: stdout, which is /dev/null here.
  // without a credential, as bench/http.ts runs its servers
  const server = await startServer({
    env: { ...process.env, BYTESEEK_TOKEN: "" },
    noAuth: true,
    handleSignals: false,
  });
  let cpu0 = process.cpuUsage();
  // PROBE_PROF=dir: a CPU profile of each measured phase alone (from reset to stats).
  const profDir = process.env.PROBE_PROF;
  const inspector = profDir ? new (await import("node:inspector/promises")).Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post("Profiler.enable");
  }
  let phase = 0;
  process.on("message", async (m: string) => {
    if (m === "reset") {
      await inspector?.post("Profiler.start");
      Object.assign(s, { txn: 0, range: 0, other: 0, failed: 0, failedKeys: {} });
      cpu0 = process.cpuUsage();
      process.send?.({ ok: true });
    } else if (m === "stats") {
      const c = process.cpuUsage(cpu0);
      if (inspector && profDir) {
        const { profile } = await inspector.post("Profiler.stop");
        const { writeFileSync } = await import("node:fs");
        writeFileSync(join(profDir, `${process.pid}.${++phase}.cpuprofile`), JSON.stringify(profile));
      }
      process.send?.({ ...s, cpuUs: c.user + c.system });
    } else if (m === "stop") void server.close().then(() => process.exit(0));
  });
  process.send?.({ url: server.url });
}

function ask<T>(child: ChildProcess, m: string): Promise<T> {
  return new Promise((resolve) => {
    child.once("message", (r) => resolve(r as T));
    child.send(m);
  });
}

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]);
}

type Req = { path: string; body: string };

/** Sends one PUT (byteseek's, or the gateway's POST /v3/kv/put), reads the answer; its status. */
async function send(pool: Pool, r: Req): Promise<number> {
  const res = await pool.request({
    method: r.path.startsWith("/v3/") ? "POST" : "PUT",
    path: r.path,
    body: r.body,
    headers: { "content-type": "application/json" },
  });
  await res.body.text();
  return res.statusCode;
}

/** `count` requests over `connections` (split across the urls), random keys; answers seconds. */
async function drive(urls: string[], connections: number, count: number, req: (i: number) => Req) {
  const pools = urls.map((u) => new Pool(u, { connections: Math.ceil(connections / urls.length) }));
  let left = count;
  let bad = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_v, c) => {
      const pool = pools[c % pools.length]!;
      while (left-- > 0) {
        if ((await send(pool, req(Math.floor(Math.random() * KEYS)))) >= 300) bad++;
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  if (bad) console.error(`  ${bad} answers not 2xx`);
  return s;
}

async function main(): Promise<void> {
  const count = Number(flag("--count") ?? 4000);
  const rounds = Number(flag("--rounds") ?? 2);
  const only = (flag("--only") ?? "gw1,x1,gw32,x32,two").split(",");
  const dir = mkdtempSync(join(tmpdir(), "byteseek-probe-"));
  const etcd = await startEtcd({ root: tmpdir() });
  const etcdPid = etcd.members[0]!.pid!;
  const children: ChildProcess[] = [];
  try {
    // `--ab dirA,dirB`: server a runs dirA's build and server b dirB's (each a dist/ copy), so the
    // phases xa/xb (x32) and x1a/x1b compare two builds on one etcd, interleaved.
    const ab = flag("--ab")?.split(",");
    const start = async (which: 0 | 1) => {
      const port = await freePort();
      const script = ab ? join(ab[which]!, "bench/etcd-probe.js") : fileURLToPath(import.meta.url);
      const child = fork(script, ["--serve"], {
        env: {
          ...process.env,
          KVSPACE: `etcd://${etcd.endpoints[0]}/bench`,
          BYTESEEK_WORKSPACE: dir,
          BYTESEEK_HOST: "127.0.0.1",
          BYTESEEK_PORT: String(port),
        },
        stdio: ["ignore", "ignore", "inherit", "ipc"],
      });
      children.push(child);
      const { url } = await new Promise<{ url: string }>((resolve) =>
        child.once("message", resolve as never),
      );
      return { child, url };
    };
    const a = await start(0);
    const b = await start(1);
    const ours = (i: number): Req => ({ path: `/v1/tree/bench/k${i}`, body: VALUE });
    const v3 = (i: number): Req => ({
      path: "/v3/kv/put",
      body: JSON.stringify({
        key: Buffer.from(`raw/k${i}`).toString("base64"),
        value: Buffer.from(VALUE).toString("base64"),
      }),
    });
    const gw = etcd.members[0]!.clientUrl;
    // Pre-write every key in order through each server, then read each on both (bench/http.ts's prefill).
    for (const [urls, req] of [
      [[a.url], ours],
      [[b.url], ours],
      [[gw], v3],
    ] as const) {
      const pool = new Pool(urls[0]!, { connections: 32 });
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          for (let i = next++; i < KEYS; i = next++) {
            await send(pool, req(i));
          }
        }),
      );
      await pool.close();
    }
    for (const s of [a, b]) {
      const pool = new Pool(s.url, { connections: 32 });
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          for (let i = next++; i < KEYS; i = next++)
            await (await pool.request({ method: "GET", path: `/v1/tree/bench/k${i}` })).body.text();
        }),
      );
      await pool.close();
    }
    const metrics = await (await fetch(`${gw}/metrics`)).text();
    console.log(
      metrics
        .split("\n")
        .filter((l) => /^etcd_debugging_mvcc_(watcher|watch_stream)_total/.test(l))
        .join("; "),
    );
    const phases: Record<
      string,
      { urls: string[]; conns: number; req: (i: number) => Req; servers: ChildProcess[] }
    > = {
      gw1: { urls: [gw], conns: 1, req: v3, servers: [] },
      x1: { urls: [a.url], conns: 1, req: ours, servers: [a.child] },
      gw32: { urls: [gw], conns: 32, req: v3, servers: [] },
      x32: { urls: [a.url], conns: 32, req: ours, servers: [a.child] },
      two: { urls: [a.url, b.url], conns: 32, req: ours, servers: [a.child, b.child] },
      // How CPU per PUT follows the load one process carries (bench/RESULTS.md, two servers).
      x8: { urls: [a.url], conns: 8, req: ours, servers: [a.child] },
      x16: { urls: [a.url], conns: 16, req: ours, servers: [a.child] },
      x64: { urls: [a.url], conns: 64, req: ours, servers: [a.child] },
      two64: { urls: [a.url, b.url], conns: 64, req: ours, servers: [a.child, b.child] },
      xa: { urls: [a.url], conns: 32, req: ours, servers: [a.child] },
      xb: { urls: [b.url], conns: 32, req: ours, servers: [b.child] },
      x1a: { urls: [a.url], conns: 1, req: ours, servers: [a.child] },
      x1b: { urls: [b.url], conns: 1, req: ours, servers: [b.child] },
      // No load for count ms: CPU "per request" is then per ms.
      idle: { urls: [], conns: 32, req: ours, servers: [a.child, b.child] },
    };
    for (let round = 1; round <= rounds; round++)
      for (const name of only) {
        const p = phases[name]!;
        const n = p.conns === 1 ? Math.ceil(count / 4) : count;
        for (const c of [a.child, b.child]) await ask(c, "reset");
        const e0 = cpuTicks(etcdPid);
        const secs =
          name === "idle"
            ? await new Promise<number>((r) => setTimeout(() => r(n / 1000), n))
            : await drive(p.urls, p.conns, n, p.req);
        const etcdUs = ((cpuTicks(etcdPid) - e0) * 10_000) / n;
        const all = await Promise.all([a.child, b.child].map((c) => ask<Stats>(c, "stats")));
        const stats = all.filter((_s, i) => p.servers.includes([a.child, b.child][i]!));
        const idleUs = all
          .filter((_s, i) => !p.servers.includes([a.child, b.child][i]!))
          .map((s) => s.cpuUs / n);
        const sum = (f: (s: Stats) => number) => stats.reduce((t, s) => t + f(s), 0);
        const failedKeys: Record<string, number> = {};
        for (const s of stats)
          for (const [k, v] of Object.entries(s.failedKeys)) failedKeys[k] = (failedKeys[k] ?? 0) + v;
        const top = Object.entries(failedKeys)
          .sort((x, y) => y[1] - x[1])
          .slice(0, 4)
          .map(([k, v]) => `${JSON.stringify(k)}×${v}`)
          .join(" ");
        console.log(
          `round ${round} ${name.padEnd(4)} ${String(Math.round(n / secs)).padStart(6)} req/s` +
            `  etcd ${etcdUs.toFixed(0)} µs/req` +
            (stats.length
              ? `  byteseek ${(sum((s) => s.cpuUs) / n).toFixed(0)} µs/req` +
                `  txn/req ${(sum((s) => s.txn) / n).toFixed(3)} range/req ${(sum((s) => s.range) / n).toFixed(3)}` +
                ` other ${sum((s) => s.other)}  PUTs/txn ${(
                  n /
                    Math.max(
                      1,
                      sum((s) => s.txn),
                    )
                ).toFixed(1)}` +
                `  failed ${sum((s) => s.failed)}${top ? ` on ${top}` : ""}`
              : "") +
            (idleUs.length ? `  idle servers ${idleUs.map((u) => u.toFixed(0)).join(",")} µs/req` : ""),
        );
      }
  } finally {
    for (const c of children) {
      c.send("stop");
      await new Promise((r) => c.once("exit", r));
    }
    await etcd.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes("--serve")) await serve();
else await main();
