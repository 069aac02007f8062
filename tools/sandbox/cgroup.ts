/**
 * The cgroups of one sandboxed command, where the server can make them: a pids cgroup (RLIMIT_NPROC
 * does not bind a process whose user is root outside its namespace — the kernel exempts uid 0 — so a
 * fork bomb is held by the cgroup there) and a memory cgroup (RLIMIT_AS caps each process's address
 * space, not what the command holds: only a memory cgroup caps the resident memory of all its
 * processes together, swap included). cgroup v1 (a hierarchy per controller) or v2 (one folder).
 */
import { randomBytes } from "node:crypto";
import { access, mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pidAlive } from "../../shared/process.js";

export type CgroupController = "pids" | "memory";

/** Which of the limits the runner's cgroups hold beyond the RLIMITs. */
export interface SandboxCaps {
  /** `limits.residentBytes`, by a memory cgroup; without one only `memoryBytes` (RLIMIT_AS) binds. */
  memory: boolean;
  /** `limits.processes` for a server running as root too, by a pids cgroup (else RLIMIT_NPROC). */
  processes: boolean;
}

/** The caps one command's cgroups hold it to. */
export interface CgroupCaps {
  processes: number;
  residentBytes: number;
}

/** One command's cgroups (one folder per hierarchy). */
export interface CommandCgroup {
  /** The cgroup.procs files to write the command's first pid into, before it runs. */
  readonly procs: readonly string[];
  /** Processes of the command the kernel killed at its memory cap (read before remove()). */
  oomKills(): Promise<number>;
  /** Removes its folders once their processes are gone (bounded wait: they may still be exiting). */
  remove(): Promise<void>;
}

export interface CommandCgroups {
  /** The controllers that bind (each in a hierarchy this process may write). */
  readonly controllers: ReadonlySet<CgroupController>;
  /** byteseek's folders, one per hierarchy, the per-command cgroups are made in. */
  readonly bases: readonly string[];
  /** Makes the cgroups of the command `name` (unique among running commands). */
  make(name: string, caps: CgroupCaps): Promise<CommandCgroup>;
  /** Removes byteseek's folders (once every command's cgroups are removed). */
  close(): Promise<void>;
}

/** Folders this process made: any other `byteseek-<own pid>-…` is a leftover of a process that had its pid. */
const madeHere = new Set<string>();

const BASE_NAME = /^byteseek-(\d+)(?:-[0-9a-f]+)?$/;

interface Hierarchy {
  /** The folder of this process's own cgroup in it. */
  dir: string;
  v2: boolean;
  /** byteseek's folder in it, of this opening (two runners in one process never share one). */
  base: string;
  controllers: CgroupController[];
}

/**
 * Finds, per controller, a hierarchy this process may write — cgroup v1's controller hierarchy at
 * `<root>/<controller>/<own cgroup>`, or a v2 folder at `<root>/<own cgroup>` (or `<root>/unified/…`)
 * offering the controller — and makes byteseek's folder there; undefined where no controller binds.
 * Empty folders of crashed servers beside it are removed first.
 */
export async function openCommandCgroups(
  root = "/sys/fs/cgroup",
  wanted: readonly CgroupController[] = ["pids", "memory"],
): Promise<CommandCgroups | undefined> {
  const own = await readFile("/proc/self/cgroup", "utf8").catch(() => "");
  const name = `byteseek-${process.pid}-${randomBytes(4).toString("hex")}`;
  const hierarchies: Hierarchy[] = [];
  for (const controller of wanted) {
    for (const candidate of candidates(own, root, controller)) {
      const known = hierarchies.find((h) => h.dir === candidate.dir);
      const h = known ?? { ...candidate, base: path.join(candidate.dir, name), controllers: [] };
      if (await usable(h, controller, known !== undefined)) {
        h.controllers.push(controller);
        if (!known) hierarchies.push(h);
        break;
      }
    }
  }
  if (hierarchies.length === 0) return undefined;
  return commandCgroups(hierarchies);
}

function candidates(
  own: string,
  root: string,
  controller: CgroupController,
): Array<{ dir: string; v2: boolean }> {
  const v1: string[] = [];
  const v2: string[] = [];
  for (const line of own.split("\n")) {
    const [, list, at] = line.split(":");
    if (list === undefined || at === undefined) continue;
    if (list.split(",").includes(controller)) v1.push(path.join(root, controller, at));
    if (list === "") v2.push(path.join(root, at), path.join(root, "unified", at));
  }
  return [...v1.map((dir) => ({ dir, v2: false })), ...v2.map((dir) => ({ dir, v2: true }))];
}

/** Can a child of byteseek's folder in `h.dir` be capped by `controller`? Tried on a probe child. */
async function usable(h: Hierarchy, controller: CgroupController, made: boolean): Promise<boolean> {
  const { base } = h;
  try {
    if (h.v2) {
      const offered = await readFile(path.join(h.dir, "cgroup.controllers"), "utf8");
      if (!offered.split(/\s+/).includes(controller)) return false;
    }
    if (!made) {
      await sweepLeftovers(h.dir);
      // not recursive: the server's own cgroup is there, and nothing is made above it
      await mkdir(base);
      madeHere.add(base);
    }
    // v2: a child gets the controller's files only when its parent enables it for its children (the
    // server's own cgroup must offer it: changing that cgroup is its manager's business, not ours)
    if (h.v2) await writeFile(path.join(base, "cgroup.subtree_control"), `+${controller}`);
    const probe = path.join(base, "probe");
    await mkdir(probe);
    try {
      await writeCaps(probe, h.v2, [controller], { processes: 8, residentBytes: 64 * 1024 ** 2 });
    } finally {
      await rmdir(probe);
    }
    return true;
  } catch {
    if (!made) {
      await rmdir(base).catch(() => {});
      madeHere.delete(base);
    }
    return false;
  }
}

/** Writes the caps of `controllers` into the cgroup `dir`. Swap counts against the memory cap. */
async function writeCaps(
  dir: string,
  v2: boolean,
  controllers: readonly CgroupController[],
  caps: CgroupCaps,
): Promise<void> {
  for (const c of controllers) {
    if (c === "pids") await writeFile(path.join(dir, "pids.max"), String(caps.processes));
    else if (v2) {
      await writeFile(path.join(dir, "memory.max"), String(caps.residentBytes));
      await writeIfPresent(path.join(dir, "memory.swap.max"), "0");
      // the whole command is killed at its cap, not one process of it that a shell then outlives
      await writeIfPresent(path.join(dir, "memory.oom.group"), "1");
    } else {
      await writeFile(path.join(dir, "memory.limit_in_bytes"), String(caps.residentBytes));
      // memory and swap together (the file is there where the kernel accounts swap)
      await writeIfPresent(path.join(dir, "memory.memsw.limit_in_bytes"), String(caps.residentBytes));
    }
  }
}

async function writeIfPresent(file: string, value: string): Promise<void> {
  if (
    await access(file).then(
      () => true,
      () => false,
    )
  )
    await writeFile(file, value);
}

/**
 * Removes the folders byteseek servers left in `dir` when they died without closing: their process
 * is gone (or it is this process's pid, reused, and not a folder of this process). A folder still
 * holding processes is not removable and stays.
 */
async function sweepLeftovers(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const pid = BASE_NAME.exec(name)?.[1];
    if (pid === undefined) continue;
    const folder = path.join(dir, name);
    if (madeHere.has(folder) || (Number(pid) !== process.pid && pidAlive(Number(pid)))) continue;
    const children = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const child of children)
      if (child.isDirectory()) await rmdir(path.join(folder, child.name)).catch(() => {});
    await rmdir(folder).catch(() => {});
  }
}

function commandCgroups(hierarchies: readonly Hierarchy[]): CommandCgroups {
  return {
    controllers: new Set(hierarchies.flatMap((h) => h.controllers)),
    bases: hierarchies.map((h) => h.base),
    async make(name, caps) {
      const made: string[] = [];
      try {
        for (const h of hierarchies) {
          const dir = path.join(h.base, name);
          // not recursive: a folder already there is another command's, never shared
          await mkdir(dir);
          made.push(dir);
          await writeCaps(dir, h.v2, h.controllers, caps);
        }
      } catch (err) {
        for (const dir of made) await rmdir(dir).catch(() => {});
        throw err;
      }
      const memory = hierarchies.find((h) => h.controllers.includes("memory"));
      const memoryDir = memory ? path.join(memory.base, name) : undefined;
      return {
        procs: made.map((dir) => path.join(dir, "cgroup.procs")),
        async oomKills() {
          if (!memory || !memoryDir) return 0;
          const text = await readFile(
            path.join(memoryDir, memory.v2 ? "memory.events" : "memory.oom_control"),
            "utf8",
          ).catch(() => "");
          return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
        },
        async remove() {
          for (const dir of made) await removeWhenEmpty(dir);
        },
      };
    },
    async close() {
      for (const { base } of hierarchies)
        await rmdir(base).then(
          () => madeHere.delete(base),
          () => {},
        );
    },
  };
}

async function removeWhenEmpty(dir: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
