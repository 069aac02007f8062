import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxRunner } from "../../tools/sandbox/runner.js";
import type { ToolResult } from "../../tools/types.js";
import { uniqueSleep, waitNoneWith } from "../helpers/processes.js";
import { harnessPolicy, openSandboxed, type Sandboxed } from "./harness.js";

function refused(results: ToolResult[], said: RegExp): void {
  for (const r of results) {
    expect(r.isError, r.text).toBe(true);
    expect(r.text).toMatch(said);
  }
}

describe("a sandboxed command runs under the policy's resource limits", () => {
  const runner = createSandboxRunner();
  let s: Sandboxed;
  beforeAll(async () => {
    s = await openSandboxed({
      runner,
      policy: harnessPolicy({
        limits: { processes: 32, memoryBytes: 64 * 1024 * 1024, tmpBytes: 1024 * 1024, cpuSeconds: 1 },
      }),
    });
  });
  afterAll(async () => {
    await s.close();
    await runner.close();
  });

  it("holds a fork bomb at the process limit (the server running as root included)", async () => {
    const sleep = uniqueSleep();
    // bounded, so a limit that does not bind fails the test instead of the machine
    refused(await s.run(`sh -c 'for i in $(seq 200); do sleep ${sleep} & done; wait'`), /Cannot fork/);
    expect(await waitNoneWith(sleep)).toBe(true);
  });

  it("holds a memory hog at the memory limit", async () => {
    refused(
      await s.run('x=$(head -c 100000000 /dev/zero | tr "\\0" x); echo "$x" | wc -c'),
      /cannot allocate|Cannot allocate memory/,
    );
  });

  it("cannot fill /tmp beyond its size", async () => {
    refused(await s.run("head -c 5000000 /dev/zero > /tmp/fill"), /No space left on device/);
  });

  it("is killed past its CPU seconds", async () => {
    refused(await s.run("while :; do :; done"), /killed by signal SIGKILL|was killed by SIGKILL/);
  });
});
