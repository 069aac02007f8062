/**
 * Where a kvspace command line goes: the quick path (quick.ts) for a plain tree command, the full
 * dispatcher (run.ts: commander, every command, the tool runtime) for the rest. The full one is
 * imported only when needed, so a plain command never loads it.
 */
import { runQuick } from "./quick.js";
import type { KvspaceDeps, KvspaceIo } from "./run.js";

/**
 * Runs one kvspace command line and resolves to its exit code, as `runKvspace` does (run.ts says
 * what each code means). With `deps` (tests that bring their own store or runtime), the full
 * dispatcher runs it.
 */
export async function dispatchKvspace(
  argv: readonly string[],
  io: KvspaceIo,
  deps: KvspaceDeps = {},
): Promise<number> {
  if (Object.keys(deps).length === 0) {
    const code = await runQuick(argv, io);
    if (code !== undefined) return code;
  }
  const { runKvspace } = await import("./run.js");
  return runKvspace(argv, io, deps);
}
