import { describe, expect, it } from "vitest";
import { pidsWith, uniqueSleep, waitNoneWith } from "../helpers/processes.js";
import { refused, type Sandboxed, useSandboxed } from "./harness.js";

describe("a sandboxed command sees only its own processes, and none outlives the call", () => {
  let s: Sandboxed;
  useSandboxed((x) => {
    s = x;
  });

  it("cannot read the server's /proc/<pid>/environ", async () => {
    refused(await s.run(`cat /proc/${process.pid}/environ`), /No such file or directory/);
  });

  it("cannot read the server's /proc/<pid>/mem", async () => {
    refused(await s.run(`head -c 16 /proc/${process.pid}/mem`), /No such file or directory/);
  });

  it("cannot signal the server", async () => {
    refused(await s.run(`kill -0 ${process.pid}`), /No such process/);
  });

  it("sees its sandbox's pid 1 as its parent, never the server", async () => {
    const results = await s.run('echo "ppid=$PPID"; ls /proc | grep -c "^[0-9]"');
    for (const r of results) {
      expect(r.kind, r.text).toBe("ok");
      expect(Number(/^(\d+)$/m.exec(r.text)?.[1])).toBeLessThan(10);
    }
  });

  it("leaves nothing behind: setsid, a double fork and nohup all end with the call", async () => {
    for (const route of [0, 1]) {
      const [a, b, c] = [uniqueSleep(), uniqueSleep(), uniqueSleep()];
      const script = `setsid sleep ${a} & (sleep ${b} &) ; nohup sleep ${c} > /dev/null 2>&1 & sleep 0.2; cat /proc/[0-9]*/cmdline | tr '\\0' ' '`;
      const results = await s.run(script);
      const r = results[route]!;
      expect(r.kind, r.text).toBe("ok");
      for (const t of [a, b, c]) {
        expect(r.text).toContain(t); // it was running while the command ran
        expect(await waitNoneWith(t)).toBe(true);
      }
    }
  });

  it("cannot push keystrokes into the server's terminal (TIOCSTI): it has no controlling terminal", async () => {
    refused(await s.run("exec 3</dev/tty"), /No such device or address/);
  });

  it("ends a command's processes when the call times out", async () => {
    const sleep = uniqueSleep();
    const r = await s.runtime.call(
      "shell.run",
      { command: `sleep ${sleep} & sleep ${sleep}`, timeout: 0.5 },
      { vid: "probe" },
    );
    expect(r.details.code).toBe("timeout");
    expect(await waitNoneWith(sleep)).toBe(true);
    expect(pidsWith(sleep)).toEqual([]);
  });
});
