/**
 * byteseek's sandbox beside `@anthropic-ai/sandbox-runtime` (issue 31), in the same run, rounds
 * interleaved so the machine's load weighs on each alike: `true` and `ls <workspace>` spawned
 * directly, through byteseek's runner (tools/sandbox/runner.ts: the view resolved, a pids cgroup,
 * bubblewrap with every namespace, the rlimits) and through sandbox-runtime's
 * `wrapWithSandboxArgv` (bubblewrap with a network namespace and its proxy bridge); each figure
 * includes building the command line and the clean-up after it. Also each one's start (once).
 *
 * sandbox-runtime is not a dependency of byteseek: install it outside the checkout and name the
 * folder holding its node_modules in BYTESEEK_SANDBOX_RUNTIME; without it the bench says so and stops.
 *
 *   mkdir -p /work/sr && (cd /work/sr && npm i @anthropic-ai/sandbox-runtime)
 *   npm run build && BYTESEEK_SANDBOX_RUNTIME=/work/sr node dist/bench/sandbox-runtime.js [--quick]
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { createSandboxRunner } from "../tools/sandbox/runner.js";
import { SandboxLimits } from "../tools/sandbox/settings.js";
import { median, percentile, printTable } from "./report.js";

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

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: "ignore", detached: true });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${file} exited ${code}`)),
    );
  });
}

async function main(): Promise<void> {
  const srt = await loadSandboxRuntime();
  if (!srt) return;
  const ws = await mkdtemp(join(tmpdir(), "byteseek-bench-srt-"));
  for (let i = 0; i < 20; i++) await writeFile(join(ws, `f${i}.txt`), "x");
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
    filesystem: { denyRead: [], allowWrite: [ws], denyWrite: [] },
  });
  const srtStart = performance.now() - t0;

  const limits = SandboxLimits.parse({});
  let n = 0;
  async function byteseek(command: string[]): Promise<number> {
    const t = performance.now();
    const cmd = await runner.prepare({
      view: { roots: [{ path: ws, write: true }], hidden: [] },
      limits,
      network: { mode: "none" },
      command,
      env,
      cwd: ws,
      name: `bench-srt-${n++}`,
    });
    await run(cmd.file, cmd.args, cmd.env);
    await cmd.release();
    return performance.now() - t;
  }
  async function sandboxRuntime(command: string): Promise<number> {
    const t = performance.now();
    const wrapped = await srt!.manager.wrapWithSandboxArgv(command);
    const [file, ...args] = wrapped.argv;
    await run(file as string, args, { ...env, ...wrapped.env });
    srt!.manager.cleanupAfterCommand();
    return performance.now() - t;
  }
  const cases: Array<[string, () => Promise<number>]> = [
    ["true, direct", () => run("true", [], env)],
    ["true, byteseek's sandbox", () => byteseek(["true"])],
    ["true, sandbox-runtime", () => sandboxRuntime("true")],
    ["ls workspace, direct", () => run("ls", [ws], env)],
    ["ls workspace, byteseek's sandbox", () => byteseek(["ls", ws])],
    ["ls workspace, sandbox-runtime", () => sandboxRuntime(`ls ${ws}`)],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  try {
    for (const [, f] of cases) await f(); // warm up
    for (let r = 0; r < ROUNDS; r++) for (const [name, f] of cases) times.get(name)?.push(await f());
  } finally {
    await srt.manager.reset();
    await runner.close();
    await rm(ws, { recursive: true, force: true });
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
}

await main();
