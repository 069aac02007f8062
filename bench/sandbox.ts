/**
 * Sandbox bench: what the sandbox costs per command, sandboxed against unsandboxed in the same run,
 * rounds interleaved so the machine's load weighs on both alike.
 * - `true` and `ls <workspace>`: spawned directly, and through the sandbox runner (the view resolved,
 *   the pids and memory cgroups made and removed, bubblewrap with every namespace, rlimits): p50 and p99 ms, and
 *   the p50 overhead (bar: ≤ 5 ms on the 2-core machine);
 * - where bubblewrap's own start goes: `bwrap --unshare-all --ro-bind / / true` alone, and the same
 *   without the user namespace's neighbours (user namespace only).
 *
 * Run: npm run build && node dist/bench/sandbox.js [--quick]
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createSandboxRunner } from "../tools/sandbox/runner.js";
import { SandboxLimits } from "../tools/sandbox/settings.js";
import { median, percentile, printTable } from "./report.js";
import { timeSpawn } from "./spawn-timer.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 20 : 60;

async function main(): Promise<void> {
  const ws = await mkdtemp(join(tmpdir(), "byteseek-bench-sandbox-"));
  for (let i = 0; i < 20; i++) await writeFile(join(ws, `f${i}.txt`), "x");
  const runner = createSandboxRunner();
  const status = await runner.status();
  if (!status.ok) {
    console.log(`the sandbox is unavailable here: ${status.cause}`);
    return;
  }
  const env = { PATH: "/usr/local/bin:/usr/bin:/bin" };
  const limits = SandboxLimits.parse({});
  let n = 0;
  async function sandboxed(command: string[]): Promise<number> {
    const t0 = performance.now();
    const cmd = await runner.prepare({
      view: { roots: [{ path: ws, write: true }], hidden: [] },
      limits,
      network: { mode: "none" },
      command,
      env,
      cwd: ws,
      name: `bench-${n++}`,
    });
    await timeSpawn(cmd.file, cmd.args, cmd.env);
    await cmd.release();
    return performance.now() - t0;
  }
  const cases: Array<[string, () => Promise<number>]> = [
    ["true, direct", () => timeSpawn("true", [], env)],
    ["true, sandboxed", () => sandboxed(["true"])],
    ["ls workspace, direct", () => timeSpawn("ls", [ws], env)],
    ["ls workspace, sandboxed", () => sandboxed(["ls", ws])],
    [
      "bwrap --unshare-all --ro-bind / / true",
      () => timeSpawn("bwrap", ["--unshare-all", "--ro-bind", "/", "/", "true"], env),
    ],
    [
      "bwrap --unshare-user --ro-bind / / true",
      () => timeSpawn("bwrap", ["--unshare-user", "--ro-bind", "/", "/", "true"], env),
    ],
    [
      "bwrap --unshare-net --ro-bind / / true",
      () => timeSpawn("bwrap", ["--unshare-net", "--ro-bind", "/", "/", "true"], env),
    ],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (const [, f] of cases) await f(); // warm up
  for (let r = 0; r < ROUNDS; r++) for (const [name, f] of cases) times.get(name)!.push(await f());
  const rows = cases.map(([name]) => {
    const xs = times.get(name)!;
    return [name, median(xs).toFixed(2), percentile(xs, 99).toFixed(2)];
  });
  printTable(["command", "p50 ms", "p99 ms"], rows);
  const over = (a: string, b: string) => median(times.get(a)!) - median(times.get(b)!);
  const trueOver = over("true, sandboxed", "true, direct");
  const lsOver = over("ls workspace, sandboxed", "ls workspace, direct");
  console.log(
    `\np50 overhead of the sandbox: true ${trueOver.toFixed(2)} ms, ls ${lsOver.toFixed(2)} ms (bar ≤ 5 ms: ${trueOver <= 5 && lsOver <= 5 ? "met" : "not met"}); ${ROUNDS} rounds`,
  );
  await runner.close();
  await rm(ws, { recursive: true, force: true });
}

await main();
