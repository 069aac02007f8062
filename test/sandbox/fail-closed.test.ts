import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSandboxRunner } from "../../tools/sandbox/runner.js";
import { harnessPolicy, openSandboxed, type Sandboxed } from "./harness.js";

describe("without a working sandbox, commands are refused (fail closed)", () => {
  let s: Sandboxed | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it("refuses every command when bubblewrap is missing, naming the cause and the setting, and runs nothing", async () => {
    s = await openSandboxed({ runner: createSandboxRunner({ bwrap: "/nonexistent/bwrap" }) });
    for (const r of await s.run("touch ran")) {
      expect(r.kind).toBe("denied");
      expect(r.details.code).toBe("sandbox_unavailable");
      expect(r.text).toContain('bubblewrap is not installed (no program "/nonexistent/bwrap")');
      expect(r.text).toContain('"sandbox": "off"');
    }
    expect(existsSync(join(s.ws, "ran"))).toBe(false);
  });

  it("refuses on another platform with the same message", async () => {
    s = await openSandboxed({ runner: createSandboxRunner({ platform: "darwin" }) });
    for (const r of await s.run("touch ran")) {
      expect(r.details.code).toBe("sandbox_unavailable");
      expect(r.text).toContain("runs on Linux only, and this is darwin");
    }
    expect(existsSync(join(s.ws, "ran"))).toBe(false);
  });

  it('runs commands unsandboxed, as the server\'s user, only when the policy says sandbox "off"', async () => {
    s = await openSandboxed({
      runner: createSandboxRunner({ bwrap: "/nonexistent/bwrap" }),
      policy: harnessPolicy({ sandbox: "off" }),
    });
    for (const r of await s.run(`test -d /proc/${process.pid} && echo sees-the-server`)) {
      expect(r.kind, r.text).toBe("ok");
      expect(r.text).toContain("sees-the-server");
    }
  });
});
