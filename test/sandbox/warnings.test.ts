import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startServer } from "../../server/main.js";
import { runInProcess } from "../cli/in-process.js";
import { captureLogger } from "../server/helpers.js";

describe('a policy with "sandbox": "off" is shown as a warning', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "byteseek-sandbox-warn-"));
    env = { PATH: process.env.PATH, HOME: dir, KVSPACE: join(dir, "store"), BYTESEEK_SYNC: "never" };
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("by kvspace policy, on stderr, and as its sandbox line; the default says on, without warning", async () => {
    const before = await runInProcess(["policy"], { env });
    expect(before.stdout).toContain("sandbox\ton\n");
    expect(before.stderr).toBe("");
    const set = await runInProcess(["set", "/byteseek/policy", 'json:{"sandbox":"off"}', "ro", "--force"], {
      env,
    });
    expect(set.code, set.stderr).toBe(0);
    const after = await runInProcess(["policy"], { env });
    expect(after.stdout).toContain("sandbox\toff\n");
    expect(after.stderr).toContain('warning: the policy turns the sandbox off ("sandbox": "off")');
  });

  it("by byteseek serve's start line, which also warns when the sandbox cannot start here", async () => {
    const logs = captureLogger();
    const server = await startServer({
      env: { ...env, BYTESEEK_PORT: "0", BYTESEEK_WORKSPACE: dir, BYTESEEK_BWRAP: join(dir, "no-bwrap") },
      cwd: dir,
      logger: logs.logger,
      handleSignals: false,
    });
    await server.close();
    const listening = logs.lines.find((l) => l.msg === "listening");
    expect(listening?.sandbox).toBe("unavailable");
    const warning = logs.lines.find(
      (l) => typeof l.msg === "string" && l.msg.includes("bubblewrap is not installed"),
    );
    expect(warning?.msg).toContain('"sandbox": "off"');
  });

  it("by byteseek serve's start line, which says which caps the server's cgroups hold (root here: all three)", async () => {
    const logs = captureLogger();
    const server = await startServer({
      env: { ...env, BYTESEEK_PORT: "0", BYTESEEK_WORKSPACE: dir },
      cwd: dir,
      logger: logs.logger,
      handleSignals: false,
    });
    const info = await fetch(`${server.url}/v1/info`, {
      headers: { authorization: `Bearer ${server.token}` },
    }).then((r) => r.json() as Promise<{ sandbox?: { caps?: Record<string, unknown>; warning?: string } }>);
    await server.close();
    expect(info.sandbox?.caps).toEqual({
      memory: true,
      processes: true,
      totalMemory: true,
      totalMemoryDefault: expect.any(Number),
    });
    expect(info.sandbox?.warning).toBeUndefined();
    const listening = logs.lines.find((l) => l.msg === "listening");
    expect(listening?.sandbox).toBe("on");
    expect(listening?.sandboxCaps).toEqual({
      residentBytes: "memory cgroup",
      processes: "pids cgroup",
      // half of the machine's memory by default (here, where no cgroup above caps it lower)
      totalResidentBytes: expect.stringMatching(/^memory cgroup over every command's, \d+ (GiB|MiB)$/),
    });
    expect(logs.lines.some((l) => typeof l.msg === "string" && l.msg.includes("residentBytes"))).toBe(false);
  });
});
