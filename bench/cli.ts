/**
 * `node dist/bench/cli.js [--quick]`: how long a one-shot `kvspace` command takes, beside a bare
 * `node -e 0` and `etcdctl` against a local etcd, in the same run (issue 35, item 1: a plain tree
 * command within 3× `node -e 0`). Each round runs every command once, back to back, so the
 * ratios are taken within a round (the VM's speed drifts); then 100 sequential sets each way, as a
 * script would. etcd is started on loopback ports in a temp folder and stopped at the end; without
 * `etcdctl` on the PATH (Debian: etcd-client) its rows are left out.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type EtcdCluster, startEtcd } from "./etcd-process.js";
import { fmt, median, pairedRatio, printTable } from "./report.js";
import { type ServerProcess, startServerProcess, stopAllServers } from "./server-process.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 5 : 11;
const SEQUENTIAL = quick ? 20 : 100;
const KVSPACE = fileURLToPath(new URL("../cli/kvspace.js", import.meta.url));
const BYTESEEK = fileURLToPath(new URL("../cli/byteseek.js", import.meta.url));
const TOKEN = "bench-cli-token-0123456789";

/** Runs a command to its end; answers its wall time in ms (throws when it fails). */
function timed(argv: readonly string[], env: NodeJS.ProcessEnv): number {
  const start = performance.now();
  const res = spawnSync(argv[0] as string, argv.slice(1), { env, stdio: ["ignore", "ignore", "pipe"] });
  const ms = performance.now() - start;
  if (res.status !== 0) throw new Error(`${argv.join(" ")} failed (${res.status}): ${res.stderr}`);
  return ms;
}

function hasEtcdctl(): boolean {
  return spawnSync("etcdctl", ["version"], { stdio: "ignore" }).status === 0;
}

const dir = await mkdtemp(join(tmpdir(), "byteseek-bench-cli-"));
let etcd: EtcdCluster | undefined;
let server: ServerProcess | undefined;
try {
  const base = { ...process.env, BYTESEEK_TOKEN: TOKEN, BYTESEEK_WORKSPACE: dir };
  const embedded = { ...base, KVSPACE: join(dir, "store") };
  // The first command on a new store seeds it (the tools' declarations, the prompts): not what is measured.
  timed([process.execPath, KVSPACE, "set", "/bench/k", "int:0"], embedded);
  server = await startServerProcess(
    [BYTESEEK, "serve"],
    { ...base, KVSPACE: join(dir, "served") },
    undefined,
  );
  const http = { ...base, KVSPACE: server.url };
  timed([process.execPath, KVSPACE, "set", "/bench/k", "int:0"], http);
  const withEtcd = hasEtcdctl();
  etcd = withEtcd ? await startEtcd() : undefined;
  const etcdEnv = { ...process.env, ETCDCTL_API: "3" };
  const etcdctl = (...args: string[]) => ["etcdctl", `--endpoints=${etcd?.endpoints[0]}`, ...args];

  const rows: Array<{ name: string; argv: string[]; env: NodeJS.ProcessEnv }> = [
    { name: "node -e 0", argv: [process.execPath, "-e", "0"], env: base },
    { name: "kvspace get (embedded)", argv: [process.execPath, KVSPACE, "get", "/bench/k"], env: embedded },
    {
      name: "kvspace set (embedded)",
      argv: [process.execPath, KVSPACE, "set", "/bench/k", "int:1"],
      env: embedded,
    },
    { name: "kvspace list (embedded)", argv: [process.execPath, KVSPACE, "list", "/bench/"], env: embedded },
    { name: "kvspace get (http)", argv: [process.execPath, KVSPACE, "get", "/bench/k"], env: http },
    { name: "kvspace set (http)", argv: [process.execPath, KVSPACE, "set", "/bench/k", "int:1"], env: http },
    ...(withEtcd
      ? [
          { name: "etcdctl put", argv: etcdctl("put", "/bench/k", "1"), env: etcdEnv },
          { name: "etcdctl get", argv: etcdctl("get", "/bench/k"), env: etcdEnv },
        ]
      : []),
  ];
  const samples = rows.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, r] of rows.entries()) samples[i]?.push(timed(r.argv, r.env));
  const node = samples[0] ?? [];
  console.log(`${ROUNDS} rounds, load average ${(await import("node:os")).loadavg()[0]?.toFixed(1)}`);
  printTable(
    ["command", "median ms", "× node -e 0 (paired)", "bar ≤ 3×"],
    rows.map((r, i) => {
      const x = pairedRatio(samples[i] ?? [], node);
      const bar = r.name.startsWith("kvspace") ? (x <= 3 ? "met" : "**not met**") : "";
      return [r.name, fmt(median(samples[i] ?? [])), x.toFixed(2), bar];
    }),
  );

  // A script's loop: sequential one-shot commands, each its own process.
  const sequential = (argv: (i: number) => string[], env: NodeJS.ProcessEnv) => {
    const start = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) timed(argv(i), env);
    return performance.now() - start;
  };
  const loops = [
    {
      name: `${SEQUENTIAL} × kvspace set (embedded)`,
      ms: sequential((i) => [process.execPath, KVSPACE, "set", `/bench/s/${i}`, `int:${i}`], embedded),
    },
    {
      name: `${SEQUENTIAL} × kvspace set (http)`,
      ms: sequential((i) => [process.execPath, KVSPACE, "set", `/bench/s/${i}`, `int:${i}`], http),
    },
    ...(withEtcd
      ? [
          {
            name: `${SEQUENTIAL} × etcdctl put`,
            ms: sequential((i) => etcdctl("put", `/bench/s/${i}`, `${i}`), etcdEnv),
          },
        ]
      : []),
  ];
  printTable(
    ["loop", "total s", "ms per command"],
    loops.map((l) => [l.name, (l.ms / 1000).toFixed(2), fmt(l.ms / SEQUENTIAL)]),
  );
  if (!withEtcd) console.log("etcdctl is not on the PATH (Debian: etcd-client): its rows are left out");
} finally {
  await server?.stop();
  await stopAllServers();
  await etcd?.remove();
  await rm(dir, { recursive: true, force: true });
}
