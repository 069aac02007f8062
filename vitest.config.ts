import { defineConfig } from "vitest/config";

/**
 * The suites that drive the fast lanes (tree/fast-lanes.ts) end to end: the HTTP tree conformance
 * suite (server/fast-path.ts), the etcd tree conformance suite (tree/etcd/rpc.ts) and MCP over
 * Streamable HTTP in both eras (mcp/fast-call.ts). They run twice: with the fast lanes, and again
 * with the reference lanes (`BYTESEEK_FAST=0`: fastify's routes, etcd3's clients, the MCP SDK), so
 * any difference between a lane and its library fails a test. The relay's and stdio's lanes are
 * compared call by call in their own suites (test/mcp/stdio-fast.test.ts, test/mcp/relay-lines.test.ts).
 */
export const REFERENCE_LANE_SUITES = [
  "test/server/http-tree-conformance.test.ts",
  "test/etcd/conformance.test.ts",
  "test/mcp/http.test.ts",
];

export default defineConfig({
  test: {
    // stops at once, in one line, on a machine without the Debian packages the suites drive
    globalSetup: ["scripts/test-deps.mjs"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
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
