import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SandboxNetwork } from "../sandbox/argv.js";
import type { OutOfMemory } from "../sandbox/cgroup.js";
import type { SandboxRunner } from "../sandbox/runner.js";
import type { SandboxLimits } from "../sandbox/settings.js";
import type { ViewSpec } from "../sandbox/view.js";
import { endCallProcesses, killGroup } from "./contain.js";
import { buildCommandEnv } from "./env.js";

/** How a call's commands start: in the sandbox of its run's grant, or — policy `sandbox: "off"` — as the server's user. */
export type ScopeSandbox =
  | { mode: "off" }
  | {
      mode: "on";
      runner: SandboxRunner;
      /** What the call's commands see (made when the first command starts). */
      view(): Promise<ViewSpec>;
      limits: SandboxLimits;
      /**
       * For a run holding `net`: starts the call's egress proxy (tools/net/proxy.ts) with its socket
       * in `dir`, once, when the first command starts; closed when the call ends. Without it the
       * command has no network at all.
       */
      egress?: (dir: string) => Promise<{ socketPath: string; close(): Promise<void> }>;
    };

export interface SpawnOptions {
  /** A host path; inside the sandbox the same path (when the grant shows it). */
  cwd: string;
  env: Record<string, string>;
  stdio: StdioOptions;
}

/** What one call's processes get, and how they are ended: handed to tools as `ctx.commands`. */
export interface CommandScope {
  /** The call's mark: every process it starts carries `BYTESEEK_CALL=<mark>`. */
  readonly mark: string;
  /** Bytes of a command's output kept on disk (the last ones). */
  readonly outputCapBytes: number;
  /** The environment for a command: allow-list, policy passEnv, `declared`, TMPDIR of the call's own, the mark. */
  env(declared?: Readonly<Record<string, string>>): Promise<Record<string, string>>;
  /** A folder of the call's own (made on first use); removed once the call's record is written. */
  scratch(): Promise<string>;
  /** Ends every process the call started (group and marked ones); safe to call more than once. */
  endProcesses(pgid?: number): Promise<number>;
  /**
   * Starts `command` (argv, no shell) for the call in its own process group: in the sandbox, or
   * directly when the policy turned it off. Throws ToolError `sandbox_unavailable` (fail closed).
   */
  spawn(command: readonly string[], options: SpawnOptions): Promise<ChildProcess>;
  /** Whether commands run in the sandbox (an exit code 128+n is then signal n, reported by its pid 1). */
  readonly sandboxed: boolean;
  /**
   * Which memory cap (the command's `limits.residentBytes`, all commands' `limits.totalResidentBytes`,
   * the machine's) the kernel killed a process of one of the call's commands at; undefined when
   * none was, or no memory cgroup binds here.
   */
  outOfMemory(): Promise<OutOfMemory | undefined>;
}

/** The runtime's side of a scope: ends what is left and removes the call's folder. */
export interface OwnedScope extends CommandScope {
  dispose(): Promise<void>;
}

export interface ScratchRoot {
  path(): Promise<string>;
  remove(): Promise<void>;
}

/**
 * The folder the server keeps command output and call temp folders in: private (0700) to the
 * server, made on first use, removed whole when the runtime closes.
 */
export function createScratchRoot(parent: string = tmpdir()): ScratchRoot {
  let made: Promise<string> | undefined;
  return {
    path(): Promise<string> {
      made ??= mkdtemp(path.join(parent, "byteseek-calls-"));
      return made;
    },
    async remove(): Promise<void> {
      if (!made) return;
      const dir = await made.catch(() => undefined);
      made = undefined;
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface ScopeOptions {
  source: Readonly<Record<string, string | undefined>>;
  passEnv: readonly string[];
  outputCapBytes: number;
  root: ScratchRoot;
  sandbox: ScopeSandbox;
  /**
   * Awaited before each command is executed, once it is set up (ToolContext.intentDurable: the
   * call's started record is stored); a rejection starts nothing.
   */
  beforeExec?: () => Promise<unknown>;
}

export function createCommandScope(options: ScopeOptions): OwnedScope {
  // Drawn when a process or folder needs it: most calls start none.
  let drawn: string | undefined;
  const mark = (): string => {
    drawn ??= randomBytes(12).toString("hex");
    return drawn;
  };
  let dir: Promise<string> | undefined;
  let used = false;
  // the tool ended its processes itself once its command was over: no second scan is needed
  let ended = false;
  function scratch(): Promise<string> {
    used = true;
    dir ??= options.root.path().then(async function makeCallDir(root) {
      const d = path.join(root, mark());
      await mkdir(path.join(d, "tmp"), { recursive: true, mode: 0o700 });
      return d;
    });
    return dir;
  }
  /** What to undo once the call's processes are gone (their cgroups). */
  const releases: Array<() => Promise<void>> = [];
  async function release(): Promise<void> {
    for (const r of releases.splice(0)) await r().catch(() => {});
  }
  const { sandbox } = options;
  let proxy: Promise<{ socketPath: string; close(): Promise<void> }> | undefined;
  /** The command's network: none, or the call's egress proxy (started on first use). */
  async function network(): Promise<SandboxNetwork> {
    if (sandbox.mode === "off" || !sandbox.egress) return { mode: "none" };
    const start = sandbox.egress;
    proxy ??= scratch().then(async (d) => {
      const dir = path.join(d, "egress");
      await mkdir(dir, { recursive: true, mode: 0o700 });
      return start(dir);
    });
    return { mode: "proxy", socketPath: (await proxy).socketPath };
  }
  async function closeProxy(): Promise<void> {
    const p = proxy;
    proxy = undefined;
    const open = await p?.catch(() => undefined);
    await open?.close().catch(() => {});
  }
  /** The sandboxed processes started (their bubblewrap): ending their groups ends everything. */
  const started: ChildProcess[] = [];
  /** Each sandboxed command's question "was it killed at its memory cap?". */
  const memoryKills: Array<() => Promise<OutOfMemory | undefined>> = [];
  /**
   * Sandboxed, a command's processes live in its PID namespace, which the kernel empties when the
   * namespace's pid 1 dies — and that dies with bubblewrap (--die-with-parent). Killing bubblewrap's
   * group is all it takes: no /proc scan for the mark (it stays the containment of "sandbox": "off").
   */
  function endSandboxed(): void {
    for (const child of started.splice(0))
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
        killGroup(child.pid, "SIGKILL");
  }
  return {
    get mark() {
      return mark();
    },
    sandboxed: sandbox.mode === "on",
    async spawn(command, spawnOptions) {
      const [file, ...args] = command;
      if (file === undefined) throw new Error("an empty command");
      used = true;
      if (sandbox.mode === "off") {
        await options.beforeExec?.();
        return spawn(file, args, { ...spawnOptions, detached: true });
      }
      const launched = await sandbox.runner.spawn(
        {
          view: await sandbox.view(),
          limits: sandbox.limits,
          network: await network(),
          command,
          env: spawnOptions.env,
          cwd: spawnOptions.cwd,
          name: mark(),
        },
        spawnOptions.stdio,
        options.beforeExec,
      );
      releases.push(launched.release);
      memoryKills.push(launched.outOfMemory);
      started.push(launched.child);
      return launched.child;
    },
    outputCapBytes: options.outputCapBytes,
    async outOfMemory() {
      if (sandbox.mode === "off") return undefined;
      for (const killed of memoryKills) {
        const oom = await killed().catch(() => undefined);
        if (oom) return oom;
      }
      return undefined;
    },
    scratch,
    async env(declared) {
      const d = await scratch();
      return buildCommandEnv({
        source: options.source,
        passEnv: options.passEnv,
        ...(declared ? { declared } : {}),
        mark: mark(),
        tmpdir: path.join(d, "tmp"),
      });
    },
    async endProcesses(pgid) {
      if (pgid !== undefined && sandbox.mode === "on") killGroup(pgid, "SIGKILL");
      if (sandbox.mode === "on") endSandboxed();
      const n = sandbox.mode === "on" ? 0 : await endCallProcesses(pgid, mark());
      ended = true;
      await release();
      return n;
    },
    async dispose() {
      if (!used) return;
      if (sandbox.mode === "on") endSandboxed();
      else if (!ended) await endCallProcesses(undefined, mark());
      await release();
      await closeProxy();
      const d = await dir?.catch(() => undefined);
      if (d) await rm(d, { recursive: true, force: true });
    },
  };
}
