import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The README's test command on a machine without the Debian packages the suites drive: it stops
 * at once with one line naming the package and the script that installs it — from `npm test`'s
 * first step and from vitest's global setup alike, never deep inside a suite.
 */

const ROOT = resolve(import.meta.dirname, "..", "..");
const CHECK = join(ROOT, "scripts", "test-deps.mjs");
/** An etcd that is not there: what a machine without etcd-server looks like to the check. */
const NO_ETCD = { ...process.env, ETCD_BIN: join(ROOT, "no-such-etcd") };

describe("the tests' Debian packages", () => {
  it("are present here, so the check says nothing and lets the tests run", () => {
    const run = spawnSync(process.execPath, [CHECK], { encoding: "utf8" });
    expect({ status: run.status, stderr: run.stderr, stdout: run.stdout }).toEqual({
      status: 0,
      stderr: "",
      stdout: "",
    });
  });

  it("when one is missing, stop npm test's first step with one line naming it and the script", () => {
    const run = spawnSync(process.execPath, [CHECK], { encoding: "utf8", env: NO_ETCD });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd().split("\n")).toEqual([
      "the tests need Debian's etcd-server: run scripts/install-test-deps (as root, or with sudo), or apt-get install etcd-server",
    ]);
  });

  it("when one is missing, stop vitest before any suite runs", () => {
    const vitest = join(ROOT, "node_modules", "vitest", "vitest.mjs");
    const run = spawnSync(process.execPath, [vitest, "run", "test/bench/report.test.ts"], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...NO_ETCD, NO_COLOR: "1", CI: "1" },
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("the tests need Debian's etcd-server: run scripts/install-test-deps");
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/✓|Test Files/);
  });

  it("are what npm test checks first", async () => {
    const pkg = (await import(join(ROOT, "package.json"), { with: { type: "json" } })).default as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.test?.startsWith("node scripts/test-deps.mjs && ")).toBe(true);
  });
});
