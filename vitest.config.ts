import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // stops at once, in one line, on a machine without the Debian packages the suites drive
    globalSetup: ["scripts/test-deps.mjs"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
