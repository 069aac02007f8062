import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * The suites that drive the fast lanes (tree/fast-lanes.ts) end to end: the HTTP tree conformance
 * suite (server/fast-path.ts), the etcd tree conformance suite (tree/etcd/rpc.ts) and MCP over
 * Streamable HTTP in both eras (mcp/fast-call.ts). They run twice: with the fast lanes, and again
 * with the reference lanes (`BYTESEEK_FAST=0`: fastify's routes, etcd3's clients, the MCP SDK), so
 * any difference between a lane and its library fails a test. The relay's and stdio's lanes are
 * compared call by call in their own suites (test/mcp/stdio-fast.test.ts, test/mcp/relay-lines.test.ts)
 * and run end to end both ways: `byteseek mcp` over stdio, and relaying to the process holding its
 * folder (the test's processes get BYTESEEK_FAST through test/mcp/helpers.ts's stdioFolders).
 */
export const REFERENCE_LANE_SUITES = [
  "test/server/http-tree-conformance.test.ts",
  "test/etcd/conformance.test.ts",
  "test/mcp/http.test.ts",
  "test/mcp/stdio.test.ts",
  "test/mcp/relay.test.ts",
];

/**
 * `--maxWorkers N` as given to `vitest run`: vitest applies it to the root config only, and the
 * projects below take this file's value over it, so without this the flag would do nothing.
 */
function maxWorkersFlag(argv: readonly string[]): number | undefined {
  for (const [i, arg] of argv.entries()) {
    const m = /^--maxWorkers(?:=(.*))?$/.exec(arg);
    if (!m) continue;
    const n = Number(m[1] ?? argv[i + 1]);
    if (Number.isInteger(n) && n > 0) return n;
  }
  return undefined;
}

export default defineConfig({
  test: {
    // stops at once, in one line, on a machine without the Debian packages the suites drive
    globalSetup: ["scripts/test-deps.mjs"],
    // files share the cores (maxWorkers below): a test's wall time depends on its neighbours'
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The files of a project share their worker's module graph instead of importing it afresh
    // (vite's transform, zod's schemas, ajv, the MCP SDK, classic-level: ~1.2 s of CPU per file, a
    // third of a 2-core run). Safe because no test mocks modules or leaves process state behind:
    // each closes what it opens, and the few that set BYTESEEK_FAST put it back.
    isolate: false,
    // Two files at a time on CI's 2 cores (cores - 1 where there are more). With one, the second
    // core sat idle while a file waited on its child processes, its browser or its timers; since
    // the files of a worker share its module graph (isolate above), a second worker costs one more
    // import of it (~1 s of CPU), not one per file. Measured at idle priority on this 2-core
    // machine, 1 -> 2 workers: test/tools (25 files) 36 -> 22 s wall at the same CPU (24 s); five
    // of the slowest files (web/page, mcp-client/sync-call, agent/cli-turn, server/crash,
    // server/token) 225 -> 149 s; test/etcd with the web runs and chat pages and agent/chaos, the
    // timing-sensitive files that failed with three workers and a per-file import, all passed.
    maxWorkers: maxWorkersFlag(process.argv) ?? Math.max(2, availableParallelism() - 1),
    reporters: ["default", "./scripts/lane-counts.mjs"],
    projects: [
      {
        extends: true,
        test: { name: "fast lanes", include: ["test/**/*.test.ts"], env: { BYTESEEK_FAST: "1" } },
      },
      {
        extends: true,
        test: { name: "reference lanes", include: REFERENCE_LANE_SUITES, env: { BYTESEEK_FAST: "0" } },
      },
    ],
  },
});
