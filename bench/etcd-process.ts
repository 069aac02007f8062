/**
 * Starts real etcd servers (Debian's `etcd-server`, binary `etcd`) on free loopback ports with a
 * temp data dir, for tests, the bench and CI. It lives in bench/ because the build compiles bench/
 * and not test/ (test/etcd/etcd-process.ts re-exports it). A member can be killed and started again on the
 * same data dir; `remove()` stops everything and deletes the files.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface EtcdMemberOptions {
  /** The etcd executable (default `$ETCD_BIN` or `etcd` on the PATH). */
  bin?: string;
  /** Folder the data dirs go in (default: /dev/shm when present, for speed, else the temp dir). */
  root?: string;
  /** Extra command-line flags. */
  args?: string[];
  /**
   * Serve clients over TLS with this certificate and key (PEM files); with `clientCa`, ask each
   * client for a certificate signed by it (etcd's --client-cert-auth). Health is then read on a
   * plain metrics port.
   */
  tls?: { cert: string; key: string; clientCa?: string };
}

/** One etcd server process. */
export interface EtcdMember {
  readonly name: string;
  readonly clientUrl: string;
  readonly peerUrl: string;
  readonly dataDir: string;
  /** Starts the process (again, on the same data dir) and waits until it answers /health. */
  start(): Promise<void>;
  /** Kills the process (SIGKILL by default) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  readonly running: boolean;
  /** The process id while running (for CPU accounting in the bench). */
  readonly pid: number | undefined;
}

export interface EtcdCluster {
  readonly members: EtcdMember[];
  /** `127.0.0.1:port` of every member, as createEtcdTree's `endpoints` takes them. */
  readonly endpoints: string[];
  /** Stops every member and deletes the data dirs. */
  remove(): Promise<void>;
}

/** Limits the tree needs: values up to 1 MiB with their history copy, txns up to 128 tree ops. */
export const ETCD_TREE_FLAGS = ["--max-request-bytes=8388608", "--max-txn-ops=1024"];

/** A free TCP port on 127.0.0.1 (bound, read, released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a single-member etcd. */
export async function startEtcd(options: EtcdMemberOptions = {}): Promise<EtcdCluster> {
  return startEtcdCluster(1, options);
}

/** Starts an etcd cluster of `size` members on loopback ports and waits until it has a leader. */
export async function startEtcdCluster(size: number, options: EtcdMemberOptions = {}): Promise<EtcdCluster> {
  const root = options.root ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  const base = await mkdtemp(join(root, "byteseek-etcd-"));
  const specs: Array<{ name: string; client: number; peer: number; metrics: number }> = [];
  for (let i = 0; i < size; i++)
    specs.push({
      name: `m${i}`,
      client: await freePort(),
      peer: await freePort(),
      metrics: await freePort(),
    });
  const { tls } = options;
  const tlsArgs = tls
    ? [
        `--cert-file=${tls.cert}`,
        `--key-file=${tls.key}`,
        ...(tls.clientCa ? [`--trusted-ca-file=${tls.clientCa}`, "--client-cert-auth"] : []),
      ]
    : [];
  const initialCluster = specs.map((s) => `${s.name}=http://127.0.0.1:${s.peer}`).join(",");
  const members = specs.map((s) =>
    createMember({
      name: s.name,
      clientUrl: `${tls ? "https" : "http"}://127.0.0.1:${s.client}`,
      peerUrl: `http://127.0.0.1:${s.peer}`,
      healthUrl: tls ? `http://127.0.0.1:${s.metrics}` : `http://127.0.0.1:${s.client}`,
      dataDir: join(base, s.name),
      logFile: join(base, `${s.name}.log`),
      initialCluster,
      bin: options.bin ?? process.env.ETCD_BIN ?? "etcd",
      args: [
        ...ETCD_TREE_FLAGS,
        ...tlsArgs,
        ...(tls ? [`--listen-metrics-urls=http://127.0.0.1:${s.metrics}`] : []),
        ...(options.args ?? []),
      ],
    }),
  );
  try {
    await Promise.all(members.map((m) => m.start()));
  } catch (err) {
    await Promise.all(members.map((m) => m.stop()));
    await rm(base, { recursive: true, force: true });
    throw err;
  }
  return {
    members,
    endpoints: members.map((m) => m.clientUrl.replace(/^https?:\/\//, "")),
    async remove() {
      await Promise.all(members.map((m) => m.stop()));
      await rm(base, { recursive: true, force: true });
    },
  };
}

interface MemberSpec {
  name: string;
  clientUrl: string;
  peerUrl: string;
  /** Where /health answers: the client URL, or a plain metrics URL when clients get TLS. */
  healthUrl: string;
  dataDir: string;
  logFile: string;
  initialCluster: string;
  bin: string;
  args: string[];
}

function createMember(spec: MemberSpec): EtcdMember {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  return {
    name: spec.name,
    clientUrl: spec.clientUrl,
    peerUrl: spec.peerUrl,
    dataDir: spec.dataDir,
    get pid() {
      return child?.pid;
    },
    get running() {
      return child !== undefined;
    },
    async start() {
      if (child) return;
      const log = createWriteStream(spec.logFile, { flags: "a" });
      const proc = spawn(
        spec.bin,
        [
          `--name=${spec.name}`,
          `--data-dir=${spec.dataDir}`,
          `--listen-client-urls=${spec.clientUrl}`,
          `--advertise-client-urls=${spec.clientUrl}`,
          `--listen-peer-urls=${spec.peerUrl}`,
          `--initial-advertise-peer-urls=${spec.peerUrl}`,
          `--initial-cluster=${spec.initialCluster}`,
          "--initial-cluster-state=new",
          "--initial-cluster-token=byteseek-test",
          "--logger=zap",
          "--log-outputs=stderr",
          ...spec.args,
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      proc.stdout?.pipe(log);
      proc.stderr?.pipe(log);
      child = proc;
      let spawnError: Error | undefined;
      exited = new Promise<void>((resolve) => {
        proc.once("error", (err) => {
          spawnError = err;
          resolve();
        });
        proc.once("exit", () => resolve());
      });
      void exited.then(() => {
        if (child === proc) child = undefined;
      });
      // A member of a cluster is healthy only once there is a leader, so wait for all in parallel.
      for (let i = 0; ; i++) {
        if (spawnError)
          throw new Error(`cannot start ${spec.bin}: ${spawnError.message} (install etcd-server)`);
        if (!child) throw new Error(`etcd ${spec.name} exited at start; see ${spec.logFile}`);
        if (await healthy(spec.healthUrl)) return;
        if (i > 600) throw new Error(`etcd ${spec.name} did not become healthy; see ${spec.logFile}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop(signal: NodeJS.Signals = "SIGKILL") {
      const proc = child;
      if (!proc) return;
      proc.kill(signal);
      await exited;
    },
  };
}

async function healthy(clientUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json()) as { health?: string };
    return body.health === "true";
  } catch {
    return false;
  }
}
