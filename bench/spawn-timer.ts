/** How long a command takes from spawn to exit, for the sandbox benches (sandbox.ts, sandbox-runtime.ts). */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";

/** Milliseconds from spawning `file` (detached, output ignored) to its exit; rejects unless it exits 0. */
export function timeSpawn(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: "ignore", detached: true });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${file} exited ${code}`)),
    );
  });
}
