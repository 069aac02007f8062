/**
 * Both lanes tested by the same suites (#36): the test command (vitest.config.ts) runs every test
 * with the fast lanes and runs the HTTP, etcd and MCP conformance suites again with the reference
 * lanes (BYTESEEK_FAST=0), and its report says how many tests ran on each. What is pinned here is
 * that arrangement, so that a change to the config which drops a lane's second run fails a test.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import config, { REFERENCE_LANE_SUITES } from "../../vitest.config.js";

const ROOT = join(import.meta.dirname, "..", "..");

/** The reporter (plain JavaScript, loaded by vitest from its path). */
interface Reporter {
  onTestRunEnd(modules: unknown[]): void;
}
const { default: LaneCounts } = (await import(pathToFileURL(join(ROOT, "scripts/lane-counts.mjs")).href)) as {
  default: new () => Reporter;
};

interface Project {
  test?: { name?: string; include?: string[]; env?: Record<string, string> };
}

describe("the test command's lanes", () => {
  const projects = (config.test?.projects ?? []) as Project[];
  const named = (name: string) => projects.find((p) => p.test?.name === name)?.test;

  it("runs every test on the fast lanes and the conformance suites again on the reference lanes", () => {
    expect(named("fast lanes")).toMatchObject({
      include: ["test/**/*.test.ts"],
      env: { BYTESEEK_FAST: "1" },
    });
    expect(named("reference lanes")).toMatchObject({
      include: REFERENCE_LANE_SUITES,
      env: { BYTESEEK_FAST: "0" },
    });
    for (const suite of REFERENCE_LANE_SUITES) expect(existsSync(join(ROOT, suite)), suite).toBe(true);
    // the HTTP, etcd and MCP conformance suites, each lane's
    expect(REFERENCE_LANE_SUITES).toEqual(
      expect.arrayContaining([
        "test/server/http-tree-conformance.test.ts",
        "test/etcd/conformance.test.ts",
        "test/mcp/http.test.ts",
        "test/mcp/relay.test.ts",
      ]),
    );
  });

  it("says at the end how many tests ran on each lane", () => {
    expect(config.test?.reporters).toContain("./scripts/lane-counts.mjs");
    // The reporter reads vitest's test modules: a project's name and its tests' results.
    const module = (project: string, states: string[]) => ({
      project: { name: project },
      children: { allTests: () => states.map((state) => ({ result: () => ({ state }) })) },
    });
    let printed = "";
    const write = process.stdout.write;
    process.stdout.write = ((text: string) => {
      printed += text;
      return true;
    }) as typeof process.stdout.write;
    try {
      new LaneCounts().onTestRunEnd([
        module("fast lanes", ["passed", "passed"]),
        module("fast lanes", ["passed", "failed"]),
        module("reference lanes", ["passed"]),
      ]);
    } finally {
      process.stdout.write = write;
    }
    expect(printed).toBe(
      "\n fast lanes: 4 tests in 2 files, 3 passed\n reference lanes: 1 tests in 1 files, 1 passed\n",
    );
  });
});
