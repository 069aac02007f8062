/**
 * HTTP figures (issue 3, and issue 8's side by side): loopback load with autocannon, 200-byte
 * values over 10,000 pre-written keys, GET and PUT at 1 and 32 connections, against
 * - byteseek on classic-level (`byteseek serve`, BYTESEEK_SYNC=never, and a second one with always
 *   for PUT),
 * - byteseek on the etcd backend (`byteseek serve`, KVSPACE=etcd://…/bench), alone and as two
 *   servers on the same tree loaded together (PUT: do two servers write at least as fast as one?),
 * - etcd's own v2 keys API and v3 JSON gateway (Debian's etcd, started here, data dir on disk),
 * - the issue's reference: a bare fastify + classic-level server that stores a PUT's body under
 *   its path and answers it to a GET, nothing more (no revisions, no change log, no directories),
 *   which shows what the stack itself does on this machine today.
 * Every server runs in a child process, so the load generator never shares its event loop; all of
 * them run through the whole bench, and the rows are measured round after round with the servers of
 * a row one after another (see measureAll). Prints a Markdown table of the medians with our/etcd
 * ratios, then issue 3's and issue 19's bars marked met / MISSED.
 *
 *   npm run build && node dist/bench/http.js [--duration S] [--rounds N] [--quick] [--profile DIR] [--driver builtin] [--etcd]
 *
 * Defaults: 5 rounds of 10 s per row; `--quick` is 1 round of 3 s. `--profile DIR` writes a
 * `--cpu-prof` profile of each byteseek server into DIR; `--driver builtin` loads with
 * bench/load.ts instead of autocannon (a driver that spends far less of the two shared cores: see
 * there). `--etcd` runs only the etcd rows (byteseek on etcd, two of them, the v3 gateway).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { freePort, startEtcd } from "./etcd-process.js";
import {
  byteseekTarget,
  eachKey,
  etcdV2Target,
  etcdV3Target,
  KEYS,
  prefill,
  type Target,
  together,
} from "./http-targets.js";
import { runLoad } from "./load.js";
import { fmt, median, pairedRatio, printTable } from "./report.js";
import { cpuTicks, type ServerProcess, startServerProcess, stopAllServers } from "./server-process.js";

const CONNECTIONS = [1, 32] as const;
const here = dirname(fileURLToPath(import.meta.url));

interface Figure {
  rps: number;
  p99: number;
  errors: number;
  /** Server CPU (user + system) per answered request, µs. */
  cpuUs: number;
}

/** One run of the load driver over random keys; req/s counts 2xx answers only. */
async function load(
  target: Target,
  op: "get" | "put",
  connections: number,
  seconds: number,
): Promise<Figure> {
  if (target.parts) {
    const each = Math.max(1, Math.floor(connections / target.parts.length));
    const figures = await Promise.all(target.parts.map((p) => load(p, op, each, seconds)));
    const rps = figures.reduce((n, f) => n + f.rps, 0);
    return {
      rps,
      p99: Math.max(...figures.map((f) => f.p99)),
      errors: figures.reduce((n, f) => n + f.errors, 0),
      cpuUs: figures.reduce((n, f) => n + f.cpuUs * f.rps, 0) / Math.max(rps, 1),
    };
  }
  // Requests prepared up front so the generator spends its time sending, not building.
  const prepared = Array.from({ length: KEYS }, (_, i) => target[op](i));
  const cpu0 = cpuTicks(target.pid);
  if (DRIVER === "autocannon") return loadWithAutocannon(target, prepared, connections, seconds, cpu0);
  const result = await runLoad({ url: target.url, connections, seconds, requests: prepared });
  const ticks = cpuTicks(target.pid) - cpu0;
  return {
    cpuUs: (ticks * 10_000) / Math.max(result.ok, 1),
    rps: result.ok / result.duration,
    p99: result.p99,
    errors: result.errors + result.non2xx,
  };
}

/** The same run with autocannon (`--driver=autocannon`), which costs the shared cores far more. */
async function loadWithAutocannon(
  target: Target,
  prepared: Array<ReturnType<Target["get"] | Target["put"]>>,
  connections: number,
  seconds: number,
  cpu0: number,
): Promise<Figure> {
  const result = await autocannon({
    url: target.url,
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest(req) {
          const r = prepared[Math.floor(Math.random() * KEYS)]!;
          // A copy of the headers: autocannon writes content-length into the object it is given.
          return { ...req, method: r.method, path: r.path, body: r.body ?? "", headers: { ...r.headers } };
        },
      },
    ],
  });
  const ok = result["2xx"];
  const ticks = cpuTicks(target.pid) - cpu0;
  return {
    cpuUs: (ticks * 10_000) / Math.max(ok, 1),
    rps: ok / result.duration,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/** A row's figure is the median of its rounds; `rounds` keeps each, for ratios within a round. */
type Row = { op: "GET" | "PUT"; connections: number; target: string; figure: Figure; rounds: Figure[] };

/** `xs` turned left by `n`: [a, b, c] by 1 is [b, c, a]. */
function rotate<T>(xs: T[], n: number): T[] {
  const k = xs.length === 0 ? 0 : n % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

/** A server to load, and the operations it is measured on. */
interface Measured {
  target: Target;
  ops: Array<"get" | "put">;
}

/**
 * Every row, round after round: within a round, the servers of one row (op, connections) are
 * loaded one after another, so a row's figures are taken a minute apart at most, not several (this
 * machine's speed drifts by a third over minutes), and each round starts the row with the next
 * server (whoever follows a write-heavy row shares the disk with its compactions). Each row's
 * figure is the median of its rounds.
 */
async function measureAll(all: Measured[], seconds: number, rounds: number): Promise<Row[]> {
  for (const { target } of all) {
    await target.up?.();
    for (const part of target.parts ?? [target]) await prefill(part);
    await load(target, "get", 32, 1); // warm-up, not recorded
    await target.down?.();
  }
  const samples = new Map<string, Figure[]>();
  for (let round = 1; round <= rounds; round++)
    for (const op of ["get", "put"] as const)
      for (const connections of CONNECTIONS)
        for (const { target } of rotate(
          all.filter((m) => m.ops.includes(op)),
          round - 1,
        )) {
          await target.up?.();
          const figure = await load(target, op, connections, seconds);
          await target.down?.();
          const id = `${op} ${connections} ${target.name}`;
          samples.set(id, [...(samples.get(id) ?? []), figure]);
          console.error(
            `  round ${round}: ${target.name} ${op} x${connections}: ${fmt(figure.rps)} req/s, p99 ${figure.p99.toFixed(2)} ms` +
              (figure.errors ? `, ${figure.errors} errors/non-2xx` : ""),
          );
        }
  const rows: Row[] = [];
  for (const [id, figures] of samples) {
    const [op, connections, ...name] = id.split(" ");
    rows.push({
      op: op === "get" ? "GET" : "PUT",
      connections: Number(connections),
      target: name.join(" "),
      figure: {
        rps: median(figures.map((f) => f.rps)),
        p99: median(figures.map((f) => f.p99)),
        cpuUs: median(figures.map((f) => f.cpuUs)),
        errors: figures.reduce((n, f) => n + f.errors, 0),
      },
      rounds: figures,
    });
  }
  return rows;
}

const OURS = "byteseek (sync never)";
const OURS_SYNC = "byteseek (sync always)";
const OURS_ETCD = "byteseek on etcd";
const OURS_ETCD_2 = "2 byteseek servers on one etcd";
const V2 = "etcd v2 keys";
const V3 = "etcd v3 gateway";
const TOY = "fastify + classic-level toy";

function printFigures(rows: Row[], seconds: number, rounds: number): void {
  const row = (op: string, c: number, t: string) =>
    rows.find((r) => r.op === op && r.connections === c && r.target === t);
  const find = (op: string, c: number, t: string) => row(op, c, t)?.figure;
  /** Ours over theirs, round by round (both taken back to back), the median of those ratios. */
  const rowRatio = (a: Row, b: Row) =>
    pairedRatio(
      a.rounds.map((f) => f.rps),
      b.rounds.map((f) => f.rps),
    );
  const versus = (op: string, c: number, ours: string, theirs: string) => {
    const a = row(op, c, ours);
    const b = row(op, c, theirs);
    return a && b ? rowRatio(a, b) : undefined;
  };
  const avg = loadavg()
    .map((x) => x.toFixed(2))
    .join(", ");
  console.log(
    `\nreq/s (2xx only) and p99 latency, medians of ${rounds} round(s) of ${seconds} s per row (the servers of a row taken one after another in each round; a ratio is the median of the rounds' ratios), 200-byte values, ${fmt(KEYS)} keys, ` +
      `random key per request, load from ${DRIVER === "builtin" ? "bench/load.ts" : "autocannon (p99 in whole ms)"}; server CPU is the server ` +
      `process's user + system time per 2xx answer (for byteseek on etcd: byteseek's process only, etcd not counted); ` +
      `${cpus().length} CPUs, load average after the run: ${avg}`,
  );
  const table: string[][] = [];
  for (const op of ["GET", "PUT"])
    for (const c of CONNECTIONS) {
      for (const t of [OURS, OURS_SYNC, OURS_ETCD, OURS_ETCD_2, TOY, V2, V3]) {
        const f = find(op, c, t);
        if (!f) continue;
        const mine = t !== V2 && t !== V3;
        const v2 = mine ? versus(op, c, t, V2) : undefined;
        const v3 = mine ? versus(op, c, t, V3) : undefined;
        table.push([
          op,
          String(c),
          t,
          fmt(f.rps),
          f.p99.toFixed(1),
          v2 === undefined ? "" : `${v2.toFixed(2)}x`,
          v3 === undefined ? "" : `${v3.toFixed(2)}x`,
          fmt(f.cpuUs),
          f.errors ? String(f.errors) : "",
        ]);
      }
    }
  printTable(
    [
      "op",
      "conns",
      "server",
      "req/s",
      "p99 ms",
      "/ etcd v2",
      "/ etcd v3",
      "server CPU µs/req",
      "errors/non-2xx",
    ],
    table,
  );

  const bars: string[][] = [];
  /** A bar at 32 connections: ours at least `need` times theirs, and with `p99`, a p99 below theirs too. */
  const bar = (label: string, op: string, ours: string, theirs: string, need: number, p99 = false) => {
    const a = row(op, 32, ours);
    const b = row(op, 32, theirs);
    if (!a || !b) return;
    const r = rowRatio(a, b);
    bars.push([label, `${r.toFixed(2)}x`, `${need.toFixed(1)}x`, r >= need ? "met" : "MISSED"]);
    if (p99)
      bars.push([
        `${label}: p99 below etcd's`,
        `${a.figure.p99.toFixed(1)} vs ${b.figure.p99.toFixed(1)} ms`,
        "below",
        a.figure.p99 < b.figure.p99 ? "met" : "MISSED",
      ]);
  };
  bar("GET vs etcd v2", "GET", OURS, V2, 1.0, true);
  bar("GET vs etcd v3", "GET", OURS, V3, 2.5, true);
  bar("PUT (sync never) vs etcd v2", "PUT", OURS, V2, 1.5, true);
  bar("PUT (sync always) vs etcd v2", "PUT", OURS_SYNC, V2, 1.0, true);
  if (bars.length > 0) {
    console.log("\nBars at 32 connections (issue 3)");
    printTable(["bar", "measured", "needed", ""], bars);
  }
  bars.length = 0;
  bar("PUT on etcd vs etcd v3 gateway", "PUT", OURS_ETCD, V3, 0.8);
  bar("GET on etcd vs etcd v3 gateway", "GET", OURS_ETCD, V3, 2.0);
  bar("PUT, 2 servers on one etcd vs 1", "PUT", OURS_ETCD_2, OURS_ETCD, 1.0);
  if (bars.length > 0) {
    console.log("\nBars at 32 connections (issue 19: byteseek on etcd)");
    printTable(["bar", "measured", "needed", ""], bars);
  }
  const toyGet = versus("GET", 32, TOY, V2);
  const toyPut = versus("PUT", 32, TOY, V2);
  if (toyGet !== undefined && toyPut !== undefined)
    console.log(
      `\nThe reference (issue 3: "a bare fastify + classic-level toy does about 15k GET/s and 12k PUT/s", etcd v2 14-17k and 6-7k) ` +
        `in this run: GET ${toyGet.toFixed(2)}x etcd v2, PUT ${toyPut.toFixed(2)}x etcd v2.`,
    );
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

/**
 * The load generator: autocannon (the default, the tool issue 3 names), or bench/load.ts, which
 * costs the shared cores about 22 µs a request instead of ~55. With the lighter driver etcd, which
 * runs on both cores, takes up the freed CPU; byteseek's one event loop cannot (see RESULTS.md).
 */
const DRIVER = flag("--driver") ?? "autocannon";
/** `--etcd`: only the rows of byteseek on etcd and the etcd v3 gateway they are held to (issue 19). */
const ETCD_ONLY = process.argv.includes("--etcd");
if (DRIVER !== "builtin" && DRIVER !== "autocannon")
  throw new Error(`--driver takes builtin or autocannon, got ${JSON.stringify(DRIVER)}`);

async function main(): Promise<void> {
  const duration = flag("--duration");
  const seconds = duration ? Number(duration) : process.argv.includes("--quick") ? 3 : 10;
  if (!(seconds > 0)) throw new Error(`--duration takes seconds, got ${JSON.stringify(duration)}`);
  const profileDir = flag("--profile");
  const cli = join(here, "../cli/byteseek.js");
  const roundsFlag = flag("--rounds");
  const rounds = roundsFlag ? Number(roundsFlag) : process.argv.includes("--quick") ? 1 : 5;
  if (!(Number.isInteger(rounds) && rounds > 0))
    throw new Error(`--rounds takes a whole number, got ${JSON.stringify(roundsFlag)}`);
  const dir = mkdtempSync(join(tmpdir(), "byteseek-bench-http-"));
  // etcd's data dir on disk like ours (its fsyncs count), not on /dev/shm.
  const etcd = await startEtcd({ root: tmpdir(), args: ["--enable-v2=true"] });
  console.error(
    `load average at start: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(", ")}`,
  );
  const servers: ServerProcess[] = [];
  let rows: Row[];
  try {
    // Every server runs through the whole bench (but the two-server row's second, below); each
    // waits idle while the others are loaded.
    // The servers run without a credential (`BYTESEEK_TOKEN=` with `--no-auth`), as the reference
    // servers do, so the rows compare the stacks, not a hash per request.
    const started = async (args: string[], env: NodeJS.ProcessEnv) => {
      const server = await startServerProcess(args, { BYTESEEK_TOKEN: "", ...env }, profileDir);
      servers.push(server);
      return server;
    };
    const onEtcd = await started([cli, "serve", "--no-auth"], {
      KVSPACE: `etcd://${etcd.endpoints[0]}/bench`,
      BYTESEEK_WORKSPACE: dir,
    });
    // The two-server row's second server runs only while that row is filled or loaded: idle, it
    // would still decode every write's watch event, on the cores the one-server rows are measured on.
    const secondUrl = `http://127.0.0.1:${await freePort()}`;
    let second: ServerProcess | undefined;
    const secondPart: Target = {
      ...byteseekTarget(OURS_ETCD, secondUrl, undefined),
      get pid() {
        return second?.pid;
      },
    };
    const startSecond = async () => {
      second = await startServerProcess(
        [cli, "serve", "--no-auth"],
        { KVSPACE: `etcd://${etcd.endpoints[0]}/bench`, BYTESEEK_WORKSPACE: dir, BYTESEEK_TOKEN: "" },
        profileDir,
        Number(new URL(secondUrl).port),
      );
      // A fresh server has read nothing: it reads each key once (the one-server row, measured
      // before it, wrote them all), as the first server has, and writes for a while (not recorded)
      // so its write path is compiled, as the first server's is by then.
      await eachKey(secondPart, "get");
      await load(secondPart, "put", 16, 2);
    };
    const etcdUrl = etcd.members[0]!.clientUrl;
    const etcdPid = etcd.members[0]!.pid;
    const etcdRows: Measured[] = [
      { target: etcdV3Target(etcdUrl, etcdPid), ops: ["get", "put"] },
      { target: byteseekTarget(OURS_ETCD, onEtcd.url, onEtcd.pid), ops: ["get", "put"] },
      {
        target: {
          ...together(OURS_ETCD_2, [byteseekTarget(OURS_ETCD, onEtcd.url, onEtcd.pid), secondPart]),
          up: startSecond,
          async down() {
            await second?.stop();
            second = undefined;
          },
        },
        ops: ["put"],
      },
    ];
    /** The whole bench: the classic-level servers, etcd v2, the toy, and the etcd rows. */
    async function measureClassicToo(etcdRows: Measured[]): Promise<Row[]> {
      const never = await started([cli, "serve", "--no-auth"], {
        KVSPACE: join(dir, "classic-never"),
        BYTESEEK_SYNC: "never",
        BYTESEEK_WORKSPACE: dir,
      });
      const always = await started([cli, "serve", "--no-auth"], {
        KVSPACE: join(dir, "classic-always"),
        BYTESEEK_SYNC: "always",
        BYTESEEK_WORKSPACE: dir,
      });
      const toy = await started([join(here, "http-toy.js")], { KVSPACE: join(dir, "toy") });
      return measureAll(
        [
          { target: byteseekTarget(OURS, never.url, never.pid), ops: ["get", "put"] },
          { target: byteseekTarget(OURS_SYNC, always.url, always.pid), ops: ["put"] },
          { target: etcdV2Target(etcdUrl, etcdPid), ops: ["get", "put"] },
          ...etcdRows,
          { target: byteseekTarget(TOY, toy.url, toy.pid), ops: ["get", "put"] },
        ],
        seconds,
        rounds,
      );
    }
    if (ETCD_ONLY) rows = await measureAll(etcdRows, seconds, rounds);
    else rows = await measureClassicToo(etcdRows);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await stopAllServers();
    await etcd.remove();
    rmSync(dir, { recursive: true, force: true });
  }
  printFigures(rows, seconds, rounds);
}

await main();
