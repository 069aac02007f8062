/**
 * The one place a command is started on a run's behalf: `shell.run`, `shell` impls and stdio MCP
 * servers all come through `prepare` (or `spawn`), which refuses when the sandbox is unavailable
 * (fail closed) and otherwise answers the bubblewrap command line of the request's view.
 */
import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { chmod, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ToolError } from "../errors.js";
import { HOME_INSIDE, type SandboxNetwork, sandboxArgv } from "./argv.js";
import {
  type CommandCgroup,
  type CommandCgroups,
  type OutOfMemory,
  openCommandCgroups,
  type SandboxCaps,
} from "./cgroup.js";
import { probeSandbox, type SandboxStatus, unavailableMessage } from "./probe.js";
import type { SandboxLimits } from "./settings.js";
import { resolveView, type ViewSpec, within } from "./view.js";

export interface SandboxRunnerOptions {
  /** The bubblewrap binary (default: `bwrap` on PATH). */
  bwrap?: string;
  /** The platform to probe for (default: this one); other than linux, the sandbox is unavailable. */
  platform?: NodeJS.Platform;
  /**
   * Where the per-command pids and memory cgroups are made (default /sys/fs/cgroup); false: none,
   * the RLIMITs only (RLIMIT_NPROC, and RLIMIT_AS for memory).
   */
  cgroupRoot?: string | false;
}

/** One command to start in the sandbox. */
export interface SandboxRequest {
  view: ViewSpec;
  limits: SandboxLimits;
  network: SandboxNetwork;
  /** The command and its arguments, as it would be run outside. */
  command: readonly string[];
  /** Its environment (HOME and TMPDIR are the sandbox's own). */
  env: Readonly<Record<string, string>>;
  /** Its working directory (a host path; when no root shows it, the private HOME). */
  cwd: string;
  /** The call's mark: its commands' cgroups are named after it. */
  name: string;
}

/** What to spawn, and what to undo once every process of it is gone. */
export interface PreparedCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  release(): Promise<void>;
  /** Whether (and at which cap: its own, all commands', the machine's) the kernel killed a process of it for want of memory. */
  outOfMemory(): Promise<OutOfMemory | undefined>;
}

export interface SandboxRunner {
  /** Whether the sandbox works here (probed once). */
  status(): Promise<SandboxStatus>;
  /** The command line that starts `request` sandboxed; throws ToolError `sandbox_unavailable`. */
  prepare(request: SandboxRequest): Promise<PreparedCommand>;
  /** Which caps bind here (the cgroups, made on first use). */
  caps(): Promise<SandboxCaps>;
  /**
   * Starts `request` sandboxed in its own process group; release() once it has exited. `ready`,
   * when given, is awaited once the command is set up and before it is executed (a rejection
   * starts nothing).
   */
  spawn(
    request: SandboxRequest,
    stdio: StdioOptions,
    ready?: () => Promise<unknown>,
  ): Promise<{
    child: ChildProcess;
    release(): Promise<void>;
    outOfMemory(): Promise<OutOfMemory | undefined>;
  }>;
  /** Removes what the runner made (its cgroup folder). */
  close(): Promise<void>;
}

export function createSandboxRunner(options: SandboxRunnerOptions = {}): SandboxRunner {
  const bwrap = options.bwrap ?? "bwrap";
  let probed: Promise<SandboxStatus> | undefined;
  let cgroups: Promise<CommandCgroups | undefined> | undefined;
  /** Numbers a call's commands: two commands never share a cgroup. */
  let commands = 0;
  let extra: Promise<string[]> | undefined;
  let hiddenFile: Promise<string | undefined> | undefined;

  /** The mode-000 file bound over hidden files (made once, in a folder of the runner's own). */
  function hidden(): Promise<string | undefined> {
    hiddenFile ??= mkdtemp(path.join(tmpdir(), "byteseek-sandbox-")).then(
      async (dir) => {
        const file = path.join(dir, "hidden");
        await writeFile(file, "");
        await chmod(file, 0o000);
        return file;
      },
      () => undefined,
    );
    return hiddenFile;
  }

  function status(): Promise<SandboxStatus> {
    probed ??= probeSandbox(bwrap, options.platform).catch((err: unknown) => ({
      ok: false as const,
      cause: `the sandbox probe failed: ${(err as Error).message}`,
    }));
    return probed;
  }

  /** Node.js itself, when installed outside /usr (stdio MCP servers are often node scripts). */
  function extraReadOnly(): Promise<string[]> {
    extra ??= realpath(process.execPath).then(
      (exe) => {
        const prefix = path.dirname(path.dirname(exe));
        return within(prefix, "/usr") || prefix === "/" ? [] : [prefix];
      },
      () => [],
    );
    return extra;
  }

  function openCgroups(): Promise<CommandCgroups | undefined> {
    cgroups ??=
      options.cgroupRoot === false
        ? Promise.resolve(undefined)
        : openCommandCgroups(options.cgroupRoot).catch(() => undefined);
    return cgroups;
  }

  async function prepare(request: SandboxRequest): Promise<PreparedCommand> {
    const s = await status();
    if (!s.ok)
      throw new ToolError("sandbox_unavailable", unavailableMessage(s.cause), {
        details: { cause: s.cause, setting: "sandbox" },
      });
    const mounts = await resolveView({
      ...request.view,
      extraReadOnly: [...(request.view.extraReadOnly ?? []), ...(await extraReadOnly())],
    });
    if (request.view.hidden.some((h) => within(request.cwd, h)))
      throw new ToolError(
        "denied",
        `the working directory ${request.cwd} is hidden from commands (the store's folder, a denied path or a credential path); run the command elsewhere in the workspace`,
        { details: { cwd: request.cwd } },
      );
    const shown = request.view.roots.some((r) => within(request.cwd, r.path));
    const made = await openCgroups();
    const cgroup: CommandCgroup | undefined = await made
      ?.make(`${request.name}-${++commands}`, request.limits)
      .catch(() => undefined);
    const hiddenAt = await hidden();
    let released: Promise<OutOfMemory | undefined> | undefined;
    const cmd = sandboxArgv(
      {
        bwrap,
        mounts,
        ...(hiddenAt !== undefined ? { hiddenFile: hiddenAt } : {}),
        limits: request.limits,
        network: request.network,
        cwd: shown ? request.cwd : HOME_INSIDE,
        oomFirst: true,
        ...(cgroup ? { cgroup: { procs: cgroup.procs, pids: made?.controllers.has("pids") ?? false } } : {}),
      },
      request.command,
    );
    return {
      file: cmd.file,
      args: cmd.args,
      env: { ...request.env, ...cmd.env },
      cwd: "/",
      async release() {
        if (!cgroup || released) return;
        // the counts are read before the folder goes
        released = cgroup.outOfMemory().then(async (killed) => {
          await cgroup.remove();
          return killed;
        });
        await released;
      },
      async outOfMemory() {
        return released ?? cgroup?.outOfMemory();
      },
    };
  }

  return {
    status,
    prepare,
    async spawn(request, stdio, ready) {
      const cmd = await prepare(request);
      if (ready)
        await ready().catch(async (err: unknown) => {
          await cmd.release();
          throw err;
        });
      const child = spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: cmd.env, detached: true, stdio });
      return { child, release: cmd.release, outOfMemory: cmd.outOfMemory };
    },
    async caps() {
      const made = await openCgroups();
      return {
        memory: made?.controllers.has("memory") ?? false,
        processes: made?.controllers.has("pids") ?? false,
        totalMemory: made?.totalMemory ?? false,
        ...(made?.totalMemoryDefault ? { totalMemoryDefault: made.totalMemoryDefault } : {}),
      };
    },
    async close() {
      const made = await cgroups;
      await made?.close();
      const file = await hiddenFile;
      if (file) await rm(path.dirname(file), { recursive: true, force: true });
    },
  };
}
