import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv, tempDirs } from "../cli/cli-server.js";
import { runInProcess } from "../cli/in-process.js";
import { assertBuilt, runCli } from "../cli/run-cli.js";
import { everythingStdio, newTag, TEST_INSTALL, taggedProcesses } from "./helpers.js";

describe("kvspace mcp and kvspace call on the embedded store", () => {
  const dirs = tempDirs("byteseek-mcpc-cli-");
  let env: NodeJS.ProcessEnv;
  const tag = newTag();
  beforeAll(async () => {
    assertBuilt();
    const store = await dirs.make();
    env = cliEnv(store, { BYTESEEK_WORKSPACE: await dirs.make() });
    const entry = JSON.stringify(everythingStdio(tag));
    // the entries are written in this process (kvspace set is not what these tests are about)
    const set = await runInProcess(["set", "/byteseek/mcp/everything", `json:${entry}`], { env });
    expect(set.code, set.stderr).toBe(0);
  });
  afterAll(() => dirs.removeAll());

  it("syncs a server's tools (exit 0), lists it, and leaves no process behind", async () => {
    const sync = await runCli(["mcp", "sync", "everything"], { env });
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toMatch(/^everything\tsynced\t16 tools\t\+everything\.echo /);
    expect(await taggedProcesses(tag)).toEqual([]);
    const again = await runCli(["mcp", "sync"], { env });
    expect(again.stdout).toBe("everything\tsynced\t16 tools\tno change\n");
    const list = await runCli(["mcp", "list"], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(
      /^everything\tstopped\t16 tools\tstdio \S+node \S+server-everything\S+ stdio\n$/,
    );
  });

  it("calls an upstream tool with kvspace call, starting the upstream and stopping it afterwards", async () => {
    const call = await runCli(["call", "everything.get-sum", '{"a":20,"b":22}'], { env });
    expect(call.code, call.stderr).toBe(0);
    expect(call.stdout).toBe("The sum of 20 and 22 is 42.\n");
    expect(await taggedProcesses(tag)).toEqual([]);
    const bad = await runCli(["call", "everything.get-sum", '{"a":"x","b":1}'], { env });
    expect(bad.code).toBe(3);
    expect(bad.stdout).toContain("Invalid arguments for everything.get-sum");
  });

  it("syncs a server without tools with nothing but its line on stdout (no SDK debug line)", async () => {
    const fixture = resolve(import.meta.dirname, "..", "fixtures", "mcp-toolless-server.mjs");
    const entry = JSON.stringify({ command: [process.execPath, fixture], readOnlyPaths: TEST_INSTALL });
    expect((await runInProcess(["set", "/byteseek/mcp/quiet", `json:${entry}`], { env })).code).toBe(0);
    const sync = await runCli(["mcp", "sync", "quiet"], { env });
    expect(sync).toMatchObject({ code: 0, stdout: "quiet\tsynced\t0 tools\tno change\n" });
  });

  it("fails a sync with a clear error naming the server when it cannot start (exit 1)", async () => {
    const entry = JSON.stringify({ command: [process.execPath, "-e", "process.exit(2)"] });
    expect((await runInProcess(["set", "/byteseek/mcp/broken", `json:${entry}`], { env })).code).toBe(0);
    const sync = await runCli(["mcp", "sync", "broken"], { env });
    expect(sync.code).toBe(1);
    expect(sync.stderr).toContain('broken: the MCP server "broken"');
    expect(sync.stderr).toContain("could not start");
    const list = await runCli(["mcp", "list"], { env });
    expect(list.stdout).toContain("broken\tfailed\t0 tools");
  });
});
