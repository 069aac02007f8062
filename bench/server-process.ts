/** The server child processes of bench/http.ts: started on a free loopback port, stopped for sure, their CPU time read from /proc. */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { freePort } from "./etcd-process.js";

/** utime + stime of a process in clock ticks (1/100 s on Linux), from /proc; 0 when unknown. */
export function cpuTicks(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** A child process that is always stopped: every one started is tracked here. */
const children = new Set<ChildProcess>();

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

async function waitHealthy(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (child.exitCode !== null) throw new Error(`server exited at start (${child.exitCode}): ${stderr()}`);
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server at ${url} did not become healthy: ${stderr()}`);
}

export interface ServerProcess {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/** `args` after node's own flags; logs (stdout) go to /dev/null, stderr is kept for errors. */
export async function startServerProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  profileDir: string | undefined,
  /** The port to listen on (default: a free one). */
  port?: number,
): Promise<ServerProcess> {
  port ??= await freePort();
  const nodeFlags = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...nodeFlags, ...args], {
    env: { ...process.env, ...env, BYTESEEK_HOST: "127.0.0.1", BYTESEEK_PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.add(child);
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    if (err.length < 8192) err += d.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(url, child, () => err);
  } catch (e) {
    await stopChild(child);
    throw e;
  }
  return { url, pid: child.pid, stop: () => stopChild(child) };
}

/** Stops every server process still running (after a failure part-way through a start). */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...children].map(stopChild));
}
