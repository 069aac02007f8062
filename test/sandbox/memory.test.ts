import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { totalmem } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  NO_MEMORY_CAP_WARNING,
  NO_TOTAL_MEMORY_CAP_WARNING,
  sandboxState,
} from "../../tools/sandbox/probe.js";
import { createSandboxRunner } from "../../tools/sandbox/runner.js";
import { SandboxLimits } from "../../tools/sandbox/settings.js";
import { setPolicy } from "../tools/helpers.js";
import { harnessPolicy, openSandboxed, type Sandboxed } from "./harness.js";

const MiB = 1024 ** 2;

/** A command holding `mib` MiB at once (tail keeps the last bytes of a pipe in memory). */
const hold = (mib: number) => `head -c ${mib * MiB} /dev/zero | tail -c ${mib * MiB} | wc -c`;

/** The memory hierarchy's folder of this process's cgroup (v1 controller, or the v2 folder). */
async function memoryHierarchy(): Promise<string | undefined> {
  const own = await readFile("/proc/self/cgroup", "utf8");
  for (const line of own.split("\n")) {
    const [, list, at] = line.split(":");
    if (list?.split(",").includes("memory") && at !== undefined)
      return path.join("/sys/fs/cgroup/memory", at);
  }
  const v2 = /^0::(.*)$/m.exec(own)?.[1];
  return v2 === undefined ? undefined : path.join("/sys/fs/cgroup", v2);
}

/** Half the memory a process of the cgroup `dir` may use: the machine's, or less where a cgroup caps it. */
async function halfTheMemory(dir: string): Promise<number> {
  const stat = await readFile(path.join(dir, "memory.stat"), "utf8");
  const above = Number(/^hierarchical_memory_limit (\d+)$/m.exec(stat)?.[1]);
  return Math.floor(Math.min(totalmem(), above) / 2 / MiB) * MiB;
}

/** The per-command cgroups under this process's byteseek folders in `dir`. */
async function commandCgroups(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const base of await readdir(dir)) {
    if (!base.startsWith(`byteseek-${process.pid}-`)) continue;
    for (const e of await readdir(path.join(dir, base), { withFileTypes: true }))
      if (e.isDirectory()) found.push(path.join(dir, base, e.name));
  }
  return found;
}

describe("a sandboxed command's resident memory is capped by a memory cgroup of its own", () => {
  const runner = createSandboxRunner();
  let s: Sandboxed;
  let hierarchy: string;
  beforeAll(async () => {
    // the server (this process) has memory and pids cgroups it may write: root here and in CI; the
    // start line and GET /v1/info say so, without a warning
    hierarchy = (await memoryHierarchy())!;
    expect(await sandboxState("on", runner.status, runner.caps)).toEqual({
      state: "on",
      caps: {
        memory: true,
        processes: true,
        totalMemory: true,
        totalMemoryDefault: await halfTheMemory(hierarchy),
      },
    });
    s = await openSandboxed({ runner, policy: harnessPolicy({ limits: { residentBytes: 64 * MiB } }) });
  });
  afterAll(async () => {
    await s.close();
    await runner.close();
  });

  /** shell.run alone: the route both tools share (the sandbox runner) is what is tested. */
  const run = (command: string) => s.runtime.call("shell.run", { command }, { vid: "probe" });

  it("kills a command holding 256 MiB under a 64 MiB cap, by either tool, saying so; the next command runs", async () => {
    // the holder (tail) is killed; the pipeline's last command then exits 0: still an error, saying why
    for (const r of await s.run(hold(256))) {
      expect(r.isError, r.text).toBe(true);
      expect(r.details.code).toBe("killed");
      expect(r.text).toMatch(/was killed: out of memory \(cap 64 MiB .*limits\.residentBytes/);
    }
    // the holder is the command itself: killed by the kernel's signal
    const alone = await run(`exec tail -c ${256 * MiB} <(head -c ${256 * MiB} /dev/zero)`);
    expect(alone.details.code).toBe("killed");
    expect(alone.text).toMatch(/Command was killed: out of memory \(cap 64 MiB/);
    expect((await run("echo still here")).text).toContain("still here");
  });

  it("runs a command within its cap, and its cgroup folder is gone once it ends", async () => {
    const r = await run(hold(16));
    expect(r.kind, r.text).toBe("ok");
    expect(r.text).toContain(String(16 * MiB));
    expect(await commandCgroups(hierarchy)).toEqual([]);
  });

  it("places the cap before the command runs: its cgroup holds it, capped, while it runs", async () => {
    // the folder is there from before the command starts until it has ended
    const running = run("sleep 1");
    // bounded: the sandbox starts within seconds even on a loaded machine
    let held: { dir: string; procs: string } | undefined;
    for (let i = 0; i < 500 && !held; i++) {
      for (const dir of await commandCgroups(hierarchy)) {
        const procs = await readFile(path.join(dir, "cgroup.procs"), "utf8").catch(() => "");
        if (procs.trim() !== "") held = { dir, procs };
      }
      if (!held) await new Promise((r) => setTimeout(r, 20));
    }
    expect(held).toBeDefined();
    expect(await readFile(path.join(held!.dir, "memory.limit_in_bytes"), "utf8")).toBe(`${64 * MiB}\n`);
    expect((await running).kind).toBe("ok");
  });

  it("cannot see or remount its cgroups from inside the sandbox", async () => {
    const r = await run("ls /sys/fs/cgroup; mkdir -p /tmp/cg && mount -t cgroup -o memory none /tmp/cg");
    expect(r.text).toMatch(/cannot access '\/sys\/fs\/cgroup': No such file or directory/);
    expect(r.text).toMatch(/permission denied|must be superuser|Operation not permitted/i);
  });

  it("runs the same command once the policy grants a higher cap", async () => {
    await setPolicy(s.tree, harnessPolicy({ limits: { residentBytes: 256 * MiB } }));
    try {
      const r = await run(hold(96));
      expect(r.kind, r.text).toBe("ok");
    } finally {
      await setPolicy(s.tree, harnessPolicy({ limits: { residentBytes: 64 * MiB } }));
    }
  });
});

describe("all sandboxed commands of a server are capped together, by the memory cgroup theirs are made in", () => {
  const runner = createSandboxRunner();
  let s: Sandboxed;
  let hierarchy: string;
  beforeAll(async () => {
    hierarchy = (await memoryHierarchy())!;
    // each command may hold 64 MiB, and all of them together no more
    s = await openSandboxed({
      runner,
      policy: harnessPolicy({ limits: { residentBytes: 64 * MiB, totalResidentBytes: 64 * MiB } }),
    });
  });
  afterAll(async () => {
    await s.close();
    await runner.close();
  });

  const run = (command: string, vid = "probe") => s.runtime.call("shell.run", { command }, { vid });

  /** Holds `mib` MiB until the command `other` holds its own too (bounded: 10 s), then counts it. */
  const holdUntil = (me: string, other: string, mib: number) =>
    `{ head -c ${mib * MiB} /dev/zero; touch .held-${me}; } | tail -c ${mib * MiB} | { i=0; until [ -e .held-${other} ] || [ $i -ge 500 ]; do i=$((i+1)); sleep 0.02; done; wc -c; }`;

  /** The cap of the runner's own folder (the only byteseek folder of this process now). */
  async function totalCap(): Promise<number> {
    const bases = (await readdir(hierarchy)).filter((n) => n.startsWith(`byteseek-${process.pid}-`));
    expect(bases).toHaveLength(1);
    return Number(await readFile(path.join(hierarchy, bases[0]!, "memory.limit_in_bytes"), "utf8"));
  }

  it("kills a command when two, each under its own cap, together hold more than the total cap, saying so; the next command runs", async () => {
    // 40 MiB fits under both caps alone
    const alone = await run(hold(40));
    expect(alone.kind, alone.text).toBe("ok");
    const both = await Promise.all([
      run(holdUntil("left", "right", 40), "left"),
      run(holdUntil("right", "left", 40), "right"),
    ]);
    const said = both.map((r) => r.text).join("\n---\n");
    const killed = both.filter((r) => r.isError);
    expect(killed.length, said).toBeGreaterThan(0);
    for (const r of killed) {
      expect(r.details.code, said).toBe("killed");
      expect(r.details.memoryCap, said).toBe("total");
      expect(r.text).toMatch(
        /killed: out of memory \(cap 64 MiB for all sandboxed commands running together.*limits\.totalResidentBytes; this command's own cap is 64 MiB/,
      );
    }
    for (const r of both.filter((x) => !x.isError)) expect(r.text).toContain(String(40 * MiB));
    expect((await run("echo still here")).text).toContain("still here");
  });

  it("makes its commands the kernel's first choice when memory runs out anywhere, before the server; a command lowers that no further than the server's own", async () => {
    const r = await run(
      "cat /proc/self/oom_score_adj; echo -500 > /proc/self/oom_score_adj; echo 0 > /proc/self/oom_score_adj; cat /proc/self/oom_score_adj",
    );
    const [before, after] = (r.text.match(/^-?\d+$/gm) ?? []).map(Number);
    const server = Number(await readFile("/proc/self/oom_score_adj", "utf8"));
    expect(before, r.text).toBe(1000);
    expect(server).toBeLessThan(1000);
    // never below the server's: only a process with CAP_SYS_RESOURCE may (then, as such a root, the
    // command may not lower it at all: it stays 1000)
    expect(r.text).toMatch(/echo: write error: Permission denied/);
    expect(after, r.text).toBeGreaterThanOrEqual(server);
  });

  it("takes the policy's total cap before a command starts; without one, half the memory the server may use", async () => {
    expect(await totalCap()).toBe(64 * MiB);
    await setPolicy(s.tree, harnessPolicy({ limits: { residentBytes: 64 * MiB } }));
    try {
      expect((await run("true")).kind).toBe("ok");
      expect(await totalCap()).toBe(await halfTheMemory(hierarchy));
    } finally {
      await setPolicy(
        s.tree,
        harnessPolicy({ limits: { residentBytes: 64 * MiB, totalResidentBytes: 64 * MiB } }),
      );
    }
  });
});

describe("the per-command cgroups of the runner", () => {
  it("never share a cgroup between two commands of one call", async () => {
    const runner = createSandboxRunner();
    const request = {
      view: { roots: [], hidden: [] },
      limits: SandboxLimits.parse({}),
      network: { mode: "none" as const },
      command: ["true"],
      env: {},
      cwd: "/",
      name: "same-mark",
    };
    try {
      const a = await runner.prepare(request);
      const b = await runner.prepare(request);
      const procs = (args: string[]) => args.filter((x) => x.endsWith("/cgroup.procs"));
      expect(procs(a.args)).toHaveLength(2);
      expect(procs(b.args).some((p) => procs(a.args).includes(p))).toBe(false);
      await a.release();
      await b.release();
    } finally {
      await runner.close();
    }
  });

  it("starts past the folders a crashed server left, and removes them", async () => {
    const hierarchy = (await memoryHierarchy())!;
    const dead = await new Promise<number>((resolve) => {
      const child = spawn("true");
      child.once("exit", () => resolve(child.pid!));
    });
    const leftovers = [
      path.join(hierarchy, `byteseek-${dead}-0dead`),
      path.join(hierarchy, `byteseek-${process.pid}-0bad`),
    ];
    for (const dir of leftovers) {
      await mkdir(path.join(dir, "cmd-1"), { recursive: true });
      // capped as a live server's folder is: all its commands together, and each
      await writeFile(path.join(dir, "memory.limit_in_bytes"), String(64 * MiB));
      await writeFile(path.join(dir, "cmd-1", "memory.limit_in_bytes"), String(32 * MiB));
    }
    const runner = createSandboxRunner();
    const s = await openSandboxed({ runner });
    try {
      expect((await s.runtime.call("shell.run", { command: "echo fine" }, { vid: "probe" })).kind).toBe("ok");
      for (const dir of leftovers) await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
    } finally {
      await s.close();
      await runner.close();
      for (const dir of leftovers) {
        await rmdir(path.join(dir, "cmd-1")).catch(() => {});
        await rmdir(dir).catch(() => {});
      }
    }
  });
});

describe("where the server can make no memory cgroup", () => {
  const runner = createSandboxRunner({ cgroupRoot: false });
  let s: Sandboxed;
  beforeAll(async () => {
    s = await openSandboxed({ runner, policy: harnessPolicy({ limits: { memoryBytes: 64 * MiB } }) });
  });
  afterAll(async () => {
    await s.close();
    await runner.close();
  });

  it("says at start that only the address space binds, per process", async () => {
    expect(await sandboxState("on", runner.status, runner.caps)).toEqual({
      state: "on",
      caps: { memory: false, processes: false, totalMemory: false },
      warning: NO_MEMORY_CAP_WARNING,
    });
    expect(NO_MEMORY_CAP_WARNING).toContain("limits.residentBytes does not bind");
  });

  it("warns, where each command's memory is capped but not all of theirs together, that the total does not bind", async () => {
    // cgroup v1 without hierarchical accounting (before Linux 5.11) is such a place; not this machine
    const caps = { memory: true, processes: true, totalMemory: false };
    expect(await sandboxState("on", runner.status, async () => caps)).toEqual({
      state: "on",
      caps,
      warning: NO_TOTAL_MEMORY_CAP_WARNING,
    });
    expect(NO_TOTAL_MEMORY_CAP_WARNING).toContain("limits.totalResidentBytes does not bind");
  });

  it("holds a process at its address space (RLIMIT_AS), as before", async () => {
    const r = await s.runtime.call(
      "shell.run",
      { command: `set -o pipefail; ${hold(96)}` },
      { vid: "probe" },
    );
    expect(r.details.code, r.text).toBe("exit_code");
    expect(r.text).toContain("tail: memory exhausted");
  });
});
