import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { seedTools } from "../../tools/catalogue/seed.js";
import { createRuntime, type Runtime } from "../../tools/runtime.js";
import { createShellTools } from "../../tools/shell/index.js";
import { openTree } from "../../tree/index.js";
import type { Tree } from "../../tree/types.js";
import { gone, waitGone } from "../helpers/processes.js";
import { declare, setPolicy, silent, tempDir } from "../tools/helpers.js";

async function pidIn(file: string): Promise<number> {
  for (let i = 0; i < 2000 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 10));
  return Number((await readFile(file, "utf8")).trim());
}

describe("with the policy's sandbox off, commands are still contained by their mark (shell.run and shell impls)", () => {
  let tree: Tree;
  let runtime: Runtime;
  let ws: Awaited<ReturnType<typeof tempDir>>;
  let scratch: Awaited<ReturnType<typeof tempDir>>;
  const started: number[] = [];
  const run = (args: Record<string, unknown>) => runtime.call("shell.run", args, { vid: "contain" });

  beforeEach(async () => {
    ws = await tempDir("byteseek-contain-ws-");
    scratch = await tempDir("byteseek-contain-scratch-");
    tree = await openTree({ backend: "memory" });
    const builtins = createShellTools();
    await seedTools({ tree, builtins });
    // the fallback containment of sandbox "off"; test/sandbox/ pins the sandbox's own
    await setPolicy(tree, { sandbox: "off" });
    runtime = createRuntime({
      tree,
      builtins,
      logger: silent,
      workspace: ws.path,
      scratchParent: scratch.path,
    });
  });
  afterEach(async () => {
    for (const pid of started.splice(0)) if (!gone(pid)) process.kill(pid, "SIGKILL");
    await runtime.close();
    await tree.close();
    await ws.remove();
    await scratch.remove();
  });

  it("ends a background job when the command exits", async () => {
    const r = await run({ command: "sleep 300 & echo $! > bg.pid; echo started" });
    expect(r.kind, r.text).toBe("ok");
    const pid = await pidIn(join(ws.path, "bg.pid"));
    started.push(pid);
    expect(await waitGone(pid)).toBe(true);
  });

  it("ends processes that left the group with setsid, and daemons that double-forked", async () => {
    const r = await run({
      command:
        "setsid sleep 300 & echo $! > a.pid; (setsid sh -c 'sleep 300 & echo $! > b.pid' &); while [ ! -s b.pid ]; do sleep 0.01; done",
    });
    expect(r.kind, r.text).toBe("ok");
    const a = await pidIn(join(ws.path, "a.pid"));
    const b = await pidIn(join(ws.path, "b.pid"));
    started.push(a, b);
    expect(await waitGone(a)).toBe(true);
    expect(await waitGone(b)).toBe(true);
  });

  it("ends what a declared shell tool left behind with setsid", async () => {
    await declare(tree, {
      name: "probe.daemon",
      description: "leaves a daemon",
      params: { type: "object", properties: {} },
      impl: { kind: "shell", argv: ["sh", "-c", "setsid sleep 300 > /dev/null 2>&1 & echo $!"] },
    });
    const r = await runtime.call("probe.daemon", {}, { vid: "contain" });
    expect(r.kind, r.text).toBe("ok");
    const pid = Number(r.text.trim());
    started.push(pid);
    expect(pid).toBeGreaterThan(0);
    expect(await waitGone(pid)).toBe(true);
  });

  it("honours a timeout beyond the policy's default and says 'timed out after N ms' when it cuts one off", async () => {
    await setPolicy(tree, { sandbox: "off", defaultTimeoutMs: 300 });
    const slow = await run({ command: "sleep 0.8; echo done", timeout: 3 });
    expect(slow.kind, slow.text).toBe("ok");
    expect(slow.text).toContain("done");
    const cut = await run({ command: "echo begun; sleep 30", timeout: 0.4 });
    expect(cut.kind).toBe("runtime");
    expect(cut.details.code).toBe("timeout");
    expect(cut.text).toContain("begun");
    expect(cut.text).toContain("timed out after 400 ms");
  });

  it("refuses a timeout of 2^31 ms or beyond the policy's maximum (kind arg), and runs nothing", async () => {
    for (const timeout of [2 ** 31 / 1000, 3601]) {
      const r = await run({ command: "touch ran", timeout });
      expect(r.kind, r.text).toBe("arg");
      expect(r.text).toContain("maximum of 3600 s");
    }
    await setPolicy(tree, { sandbox: "off", maxTimeoutMs: 1000 });
    const r = await run({ command: "touch ran", timeout: 2 });
    expect(r.kind).toBe("arg");
    expect(r.text).toContain("maximum of 1 s");
    const tiny = await run({ command: "touch ran", timeout: 0.0001 });
    expect(tiny.kind).toBe("arg");
    expect(existsSync(join(ws.path, "ran"))).toBe(false);
  });

  it("cuts a declared tool off at its own timeoutMs with 'timed out after N ms'", async () => {
    await declare(tree, {
      name: "probe.slow",
      description: "sleeps",
      params: { type: "object", properties: {} },
      impl: { kind: "shell", argv: ["sleep", "30"], timeoutMs: 400 },
    });
    const r = await runtime.call("probe.slow", {}, { vid: "contain" });
    expect(r.details.code).toBe("timeout");
    expect(r.text).toContain("timed out after 400 ms");
  });

  it("keeps at most twice the cap of output on disk, in the server's own folder, and removes it with the call", async () => {
    await setPolicy(tree, { sandbox: "off", outputCapBytes: 64 * 1024 });
    const r = await run({
      command:
        'head -c 3000000 /dev/zero | tr \'\\0\' x; echo; echo tail-line; sleep 0.5; stat -c spool=%s "$TMPDIR/../output.log"; echo "tmp=$TMPDIR"',
    });
    expect(r.kind, r.text).toBe("ok");
    const spool = Number(/spool=(\d+)/.exec(r.text)?.[1]);
    expect(spool).toBeGreaterThan(0);
    expect(spool).toBeLessThanOrEqual(2 * 64 * 1024);
    expect(r.text).toContain("tail-line");
    expect(r.details.bytes).toBeGreaterThan(3_000_000);
    expect(r.text).toMatch(/\(\d{7} bytes in all\)/);
    const tmp = /tmp=(\S+)/.exec(r.text)?.[1] ?? "";
    expect(tmp.startsWith(scratch.path)).toBe(true);
    // the record is written: the call's folder is gone, the server's folder is empty
    expect(existsSync(tmp)).toBe(false);
    const [root] = await readdir(scratch.path);
    expect(await readdir(join(scratch.path, root!))).toEqual([]);
    await runtime.close();
    expect(await readdir(scratch.path)).toEqual([]);
  });

  it("gives every call a fresh TMPDIR of its own", async () => {
    const one = await run({ command: 'echo "$TMPDIR"; touch "$TMPDIR/x"' });
    const two = await run({ command: 'echo "$TMPDIR"; ls -A "$TMPDIR"' });
    const first = one.text.split("\n")[0]!;
    expect(first).not.toBe(two.text.split("\n")[0]);
    expect(two.text.split("\n")[1]).toBe("Exit code: 0");
    expect(existsSync(first)).toBe(false);
  });
});
