/**
 * byteseek's sandbox beside `@anthropic-ai/sandbox-runtime` (issue 31), in the same run, rounds
 * interleaved so the machine's load weighs on each alike: `true` and `ls <workspace>` spawned
 * directly, through byteseek's runner (tools/sandbox/runner.ts: the view resolved, a pids cgroup,
 * bubblewrap with every namespace, the rlimits) and through sandbox-runtime's
 * `wrapWithSandboxArgv` (bubblewrap with a network namespace and its proxy bridge); each figure
 * includes building the command line and the clean-up after it. Also each one's start (once).
 *
 * Then escape probes taken from test/sandbox/*.test.ts, each a bash script run without a sandbox (the
 * control: it must escape there), through byteseek's runner and through sandbox-runtime, with the one
 * config of the whole run: byteseek's view is the workspace (writable) with `private/` hidden, no
 * network, default limits; sandbox-runtime's is `allowWrite: [workspace]`, `denyRead:
 * [workspace/private]`, no allowed domains. A probe escaped when its script printed the mark (or, for
 * "leave a process behind", when its process outlived the call). Secrets are planted in a temp folder
 * the bench removes; the only network probe is a loopback listener the bench opens; each probe is
 * killed past PROBE_TIMEOUT_MS.
 *
 * sandbox-runtime is not a dependency of byteseek: install it outside the checkout and name the
 * folder holding its node_modules in BYTESEEK_SANDBOX_RUNTIME; without it the bench says so and stops.
 *
 *   mkdir -p /work/sr && (cd /work/sr && npm i @anthropic-ai/sandbox-runtime)
 *   npm run build && BYTESEEK_SANDBOX_RUNTIME=/work/sr node dist/bench/sandbox-runtime.js [--quick]
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { createSandboxRunner } from "../tools/sandbox/runner.js";
import { SandboxLimits } from "../tools/sandbox/settings.js";
import { median, percentile, printTable } from "./report.js";
import { timeSpawn } from "./spawn-timer.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 20 : 60;

/** The part of sandbox-runtime's SandboxManager this bench uses (its own types are not installed here). */
interface SandboxManager {
  initialize(config: {
    network: { allowedDomains: string[]; deniedDomains: string[] };
    filesystem: { denyRead: string[]; allowWrite: string[]; denyWrite: string[] };
  }): Promise<void>;
  wrapWithSandboxArgv(command: string): Promise<{ argv: string[]; env: NodeJS.ProcessEnv }>;
  cleanupAfterCommand(): void;
  reset(): Promise<void>;
}

/** sandbox-runtime from the folder BYTESEEK_SANDBOX_RUNTIME names, with its version; undefined when absent. */
async function loadSandboxRuntime(): Promise<{ manager: SandboxManager; version: string } | undefined> {
  const dir = process.env.BYTESEEK_SANDBOX_RUNTIME;
  const pkg = dir ? join(dir, "node_modules", "@anthropic-ai", "sandbox-runtime") : undefined;
  if (!pkg || !existsSync(join(pkg, "package.json"))) {
    console.log(
      "sandbox-runtime: not installed (set BYTESEEK_SANDBOX_RUNTIME to a folder where `npm i @anthropic-ai/sandbox-runtime` ran); skipped",
    );
    return undefined;
  }
  const { version } = JSON.parse(await readFile(join(pkg, "package.json"), "utf8")) as { version: string };
  const mod = (await import(pathToFileURL(join(pkg, "dist", "index.js")).href)) as {
    SandboxManager: SandboxManager;
  };
  return { manager: mod.SandboxManager, version };
}

/** What a probe must never see; and what its script prints when it got through. */
const SECRET = "srt-bench-canary-5b9e04";
const MARK = "ESCAPED-7d1f";
const PROBE_TIMEOUT_MS = 20_000;

interface Outcome {
  code: number | null;
  stdout: string;
  timedOut: boolean;
}

/** Runs to the end with stdout captured; its whole process group is killed past PROBE_TIMEOUT_MS. */
function capture(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, cwd, stdio: ["ignore", "pipe", "ignore"], detached: true });
    let stdout = "";
    let timedOut = false;
    child.stdout.on("data", (d: Buffer) => {
      if (stdout.length < 65536) stdout += d.toString();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, PROBE_TIMEOUT_MS);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, timedOut });
    });
  });
}

/** Pids of the processes whose argv is exactly `argv` (the probes' left-behind sleeps). */
async function findProcesses(argv: readonly string[]): Promise<number[]> {
  const want = `${argv.join("\0")}\0`;
  const found: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (cmdline === want) found.push(Number(name));
  }
  return found;
}

interface Probe {
  name: string;
  /** The bash script; `tag` is unique per run of it. */
  script(tag: string): string;
  /** Whether it got through (default: its output holds MARK). */
  escaped?(out: Outcome, tag: string): Promise<boolean>;
}

interface Planted {
  ws: string;
  outside: string;
  home: string;
  socket: string;
  port: number;
  serverPid: number;
}

/** The probes, after test/sandbox/*.test.ts; none reaches past loopback or the bench's temp folder. */
function probes(p: Planted): Probe[] {
  const ok = `&& echo ${MARK}`;
  const sleeper = (tag: string) => ["sleep", `97.${tag}`];
  return [
    {
      name: "write in the workspace (granted: both must allow it)",
      script: () => `echo x > ${p.ws}/made ${ok}`,
    },
    {
      name: "read a planted credential (.ssh/id_ed25519) outside the workspace",
      script: () => `grep -q ${SECRET} ${p.home}/.ssh/id_ed25519 ${ok}`,
    },
    {
      name: "read a file outside the workspace",
      script: () => `grep -q ${SECRET} ${p.outside}/note.txt ${ok}`,
    },
    {
      name: "read a denied path in the workspace",
      script: () => `grep -q ${SECRET} ${p.ws}/private/key.txt ${ok}`,
    },
    {
      name: `list the server user's HOME (${homedir()})`,
      script: () => `ls -A ${homedir()} > /dev/null ${ok}`,
    },
    { name: "read /etc/shadow", script: () => `head -c 1 /etc/shadow > /dev/null ${ok}` },
    { name: "write outside the workspace", script: (t) => `echo x > ${p.outside}/pwned-${t} ${ok}` },
    {
      name: "write through a workspace symlink pointing out",
      script: (t) => `echo x > ${p.ws}/out/pwned-link-${t} ${ok}`,
    },
    {
      name: "reach a loopback TCP listener",
      script: () => `exec 3<>/dev/tcp/127.0.0.1/${p.port} && timeout 5 grep -q ${SECRET} <&3 ${ok}`,
    },
    {
      name: "reach a Unix socket outside the workspace",
      script: () => `timeout 5 socat -u UNIX-CONNECT:${p.socket} - | grep -q ${SECRET} ${ok}`,
    },
    {
      name: "see the server's process (/proc/<pid>)",
      script: () => `grep -q sandbox-runtime /proc/${process.pid}/cmdline ${ok}`,
    },
    {
      name: "read a server process's environment secret",
      script: () => `tr '\\0' '\\n' < /proc/${p.serverPid}/environ | grep -q ${SECRET} ${ok}`,
    },
    { name: "signal the server (kill -0)", script: () => `kill -0 ${process.pid} ${ok}` },
    {
      name: "leave a process behind (setsid)",
      script: (t) => `setsid ${sleeper(t).join(" ")} > /dev/null 2>&1 < /dev/null & sleep 0.2`,
      async escaped(_out, t) {
        await new Promise((r) => setTimeout(r, 500));
        const left = await findProcesses(sleeper(t));
        for (const pid of left) process.kill(pid, "SIGKILL");
        return left.length > 0;
      },
    },
    {
      name: "fork 600 processes (byteseek's default limit: 512)",
      script: () => `sh -c 'i=0; while [ $i -lt 600 ]; do sleep 2 & i=$((i+1)); done; wait' ${ok}`,
    },
  ];
}

async function main(): Promise<void> {
  const srt = await loadSandboxRuntime();
  if (!srt) return;
  const base = await realpath(await mkdtemp(join(tmpdir(), "byteseek-bench-srt-")));
  const ws = join(base, "ws");
  const outside = join(base, "outside");
  const home = join(base, "home");
  await mkdir(join(ws, "private"), { recursive: true });
  await mkdir(outside);
  await mkdir(join(home, ".ssh"), { recursive: true });
  for (let i = 0; i < 20; i++) await writeFile(join(ws, `f${i}.txt`), "x");
  await writeFile(join(ws, "private", "key.txt"), SECRET);
  await writeFile(join(home, ".ssh", "id_ed25519"), SECRET);
  await writeFile(join(outside, "note.txt"), SECRET);
  await symlink(outside, join(ws, "out"));
  const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };

  let t0 = performance.now();
  const runner = createSandboxRunner();
  const status = await runner.status();
  const ownStart = performance.now() - t0;
  if (!status.ok) {
    console.log(`byteseek's sandbox is unavailable here: ${status.cause}`);
    return;
  }
  t0 = performance.now();
  await srt.manager.initialize({
    network: { allowedDomains: [], deniedDomains: [] },
    filesystem: { denyRead: [join(ws, "private")], allowWrite: [ws], denyWrite: [] },
  });
  const srtStart = performance.now() - t0;

  const limits = SandboxLimits.parse({});
  let n = 0;
  async function byteseek(command: string[]): Promise<number> {
    const t = performance.now();
    const cmd = await runner.prepare({
      view: { roots: [{ path: ws, write: true }], hidden: [join(ws, "private")] },
      limits,
      network: { mode: "none" },
      command,
      env,
      cwd: ws,
      name: `bench-srt-${n++}`,
    });
    await timeSpawn(cmd.file, cmd.args, cmd.env);
    await cmd.release();
    return performance.now() - t;
  }
  async function probeByteseek(script: string): Promise<Outcome> {
    const cmd = await runner.prepare({
      view: { roots: [{ path: ws, write: true }], hidden: [join(ws, "private")] },
      limits,
      network: { mode: "none" },
      command: ["bash", "-c", script],
      env,
      cwd: ws,
      name: `bench-srt-${n++}`,
    });
    try {
      return await capture(cmd.file, cmd.args, cmd.env, cmd.cwd);
    } finally {
      await cmd.release();
    }
  }
  async function probeSandboxRuntime(script: string): Promise<Outcome> {
    const wrapped = await srt!.manager.wrapWithSandboxArgv(script);
    const [file, ...args] = wrapped.argv;
    try {
      return await capture(file as string, args, { ...env, ...wrapped.env }, ws);
    } finally {
      srt!.manager.cleanupAfterCommand();
    }
  }
  async function sandboxRuntime(command: string): Promise<number> {
    const t = performance.now();
    const wrapped = await srt!.manager.wrapWithSandboxArgv(command);
    const [file, ...args] = wrapped.argv;
    await timeSpawn(file as string, args, { ...env, ...wrapped.env });
    srt!.manager.cleanupAfterCommand();
    return performance.now() - t;
  }
  const cases: Array<[string, () => Promise<number>]> = [
    ["true, direct", () => timeSpawn("true", [], env)],
    ["true, byteseek's sandbox", () => byteseek(["true"])],
    ["true, sandbox-runtime", () => sandboxRuntime("true")],
    ["ls workspace, direct", () => timeSpawn("ls", [ws], env)],
    ["ls workspace, byteseek's sandbox", () => byteseek(["ls", ws])],
    ["ls workspace, sandbox-runtime", () => sandboxRuntime(`ls ${ws}`)],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  const probeRows: string[][] = [];
  // The "server" the probes go after: a loopback listener and a Unix socket that hand out the
  // secret, and a process holding it in its environment (as DATABASE_URL did in the issue).
  const listener = createServer((c) => c.end(SECRET));
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
  const port = (listener.address() as { port: number }).port;
  const socket = join(outside, "server.sock");
  const unixServer = createServer((c) => c.end(SECRET));
  await new Promise<void>((r) => unixServer.listen(socket, r));
  const server = spawn("sleep", ["600"], {
    env: { ...env, DATABASE_URL: `postgres://u:${SECRET}@db/x` },
    stdio: "ignore",
  });
  try {
    for (const [, f] of cases) await f(); // warm up
    for (let r = 0; r < ROUNDS; r++) for (const [name, f] of cases) times.get(name)?.push(await f());
    const planted: Planted = { ws, outside, home, socket, port, serverPid: server.pid ?? -1 };
    const routes: Array<(script: string) => Promise<Outcome>> = [
      (script) => capture("bash", ["-c", script], env, ws),
      probeByteseek,
      probeSandboxRuntime,
    ];
    let tag = 100;
    for (const probe of probes(planted)) {
      const row = [probe.name];
      for (const route of routes) {
        const t = String(tag++);
        const out = await route(probe.script(t));
        const escaped = probe.escaped ? await probe.escaped(out, t) : out.stdout.includes(MARK);
        row.push(`${escaped ? "escaped" : "blocked"}${out.timedOut ? " (timed out)" : ""}`);
      }
      probeRows.push(row);
    }
  } finally {
    server.kill("SIGKILL");
    await new Promise((r) => listener.close(r));
    await new Promise((r) => unixServer.close(r));
    await srt.manager.reset();
    await runner.close();
    await rm(base, { recursive: true, force: true });
  }
  printTable(
    ["command", "p50 ms", "p99 ms"],
    cases.map(([name]) => {
      const xs = times.get(name) ?? [];
      return [name, median(xs).toFixed(2), percentile(xs, 99).toFixed(2)];
    }),
  );
  console.log(
    `\nstart: byteseek's runner ${ownStart.toFixed(1)} ms (status: bwrap probed), sandbox-runtime ${srt.version} ${srtStart.toFixed(1)} ms (initialize: its proxies); ${ROUNDS} rounds`,
  );
  console.log("\nescape probes (no sandbox: the control, where each must escape)\n");
  printTable(["probe", "no sandbox", "byteseek", "sandbox-runtime"], probeRows);
}

await main();
