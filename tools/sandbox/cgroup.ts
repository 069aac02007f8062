/**
 * The cgroups of one sandboxed command, where the server can make them: a pids cgroup (RLIMIT_NPROC
 * does not bind a process whose user is root outside its namespace — the kernel exempts uid 0 — so a
 * fork bomb is held by the cgroup there) and a memory cgroup (RLIMIT_AS caps each process's address
 * space, not what the command holds: only a memory cgroup caps the resident memory of all its
 * processes together, swap included). cgroup v1 (a hierarchy per controller) or v2 (one folder).
 * They are made in byteseek's own folder, whose memory cap binds all commands together
 * (`limits.totalResidentBytes`), so many commands at their own caps cannot run the machine out.
 */
import { randomBytes } from "node:crypto";
import { access, mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { totalmem } from "node:os";
import path from "node:path";
import { pidAlive } from "../../shared/process.js";

export type CgroupController = "pids" | "memory";

/** Which of the limits the runner's cgroups hold beyond the RLIMITs. */
export interface SandboxCaps {
  /** `limits.residentBytes`, by a memory cgroup; without one only `memoryBytes` (RLIMIT_AS) binds. */
  memory: boolean;
  /** `limits.processes` for a server running as root too, by a pids cgroup (else RLIMIT_NPROC). */
  processes: boolean;
  /**
   * `limits.totalResidentBytes`, by the memory cgroup byteseek's folder is: every command's memory
   * cgroup is made in it, and its cap binds them together (cgroup v2, or v1 hierarchical accounting).
   */
  totalMemory: boolean;
  /** Where it binds, the cap all commands together get when the policy names none (`defaultTotalBytes`). */
  totalMemoryDefault?: number;
}

/** The caps one command's cgroups hold it to. */
export interface CgroupCaps {
  processes: number;
  residentBytes: number;
  /** The cap of all commands together (byteseek's folder); absent: `defaultTotalBytes`. */
  totalResidentBytes?: number | undefined;
}

/**
 * Why the kernel killed a process of a command for want of memory: the command reached its own cap
 * (`limits.residentBytes`), all commands together reached theirs (`limits.totalResidentBytes`), or
 * neither did — the machine, or a cgroup above the server, ran out.
 */
export interface OutOfMemory {
  cap: "command" | "total" | "machine";
  /** The command's own cap. */
  residentBytes: number;
  /** The cap of all commands together, when one binds. */
  totalResidentBytes?: number;
}

/** One command's cgroups (one folder per hierarchy). */
export interface CommandCgroup {
  /** The cgroup.procs files to write the command's first pid into, before it runs. */
  readonly procs: readonly string[];
  /** Whether (and at which cap) the kernel killed a process of the command (read before remove()). */
  outOfMemory(): Promise<OutOfMemory | undefined>;
  /** Removes its folders once their processes are gone (bounded wait: they may still be exiting). */
  remove(): Promise<void>;
}

export interface CommandCgroups {
  /** The controllers that bind (each in a hierarchy this process may write). */
  readonly controllers: ReadonlySet<CgroupController>;
  /** byteseek's folders, one per hierarchy, the per-command cgroups are made in. */
  readonly bases: readonly string[];
  /** Whether byteseek's memory folder caps all commands together (`limits.totalResidentBytes`). */
  readonly totalMemory: boolean;
  /** Where it does, that cap when the policy names none. */
  readonly totalMemoryDefault?: number;
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
  /** The memory hierarchy's cap of all commands together, when it binds (set up by `capTotal`). */
  total?: TotalCap;
}

interface TotalCap {
  /** Where no policy names one: half of what the server may use. */
  defaultBytes: number;
  /** The cap written last (the policy's may change between commands). */
  applied: number;
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
    if (controller === "memory") h.total = await capTotal(h);
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
  const memory = hierarchies.find((h) => h.controllers.includes("memory"));
  /** Writes of the total cap, one after another (commands are made concurrently). */
  let totalWrites: Promise<void> = Promise.resolve();
  /** Applies the cap of all commands together a command's policy names (or the default) before it starts. */
  async function applyTotal(wanted: number | undefined): Promise<void> {
    const total = memory?.total;
    if (!memory || !total) return;
    const bytes = wanted ?? total.defaultBytes;
    if (total.applied === bytes) return;
    totalWrites = totalWrites.then(async () => {
      // a cap under what the commands hold now may be refused (v1: EBUSY): the next command tries again
      if (total.applied !== bytes && (await writeTotal(memory, bytes))) total.applied = bytes;
    });
    await totalWrites;
  }
  return {
    controllers: new Set(hierarchies.flatMap((h) => h.controllers)),
    bases: hierarchies.map((h) => h.base),
    totalMemory: memory?.total !== undefined,
    ...(memory?.total ? { totalMemoryDefault: memory.total.defaultBytes } : {}),
    async make(name, caps) {
      await applyTotal(caps.totalResidentBytes);
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
      const memoryDir = memory ? path.join(memory.base, name) : undefined;
      const totalBytes = memory?.total?.applied;
      // the total cap reached before the command was made is another command's business
      const reachedBefore = memory?.total ? await totalReached(memory) : 0;
      return {
        procs: made.map((dir) => path.join(dir, "cgroup.procs")),
        async outOfMemory() {
          if (!memory || !memoryDir) return undefined;
          const events = memory.v2 ? "memory.events" : "memory.oom_control";
          if (((await count(path.join(memoryDir, events), "oom_kill")) ?? 0) === 0) return undefined;
          const sizes = {
            residentBytes: caps.residentBytes,
            ...(totalBytes !== undefined ? { totalResidentBytes: totalBytes } : {}),
          };
          // which cap was reached: the kernel counts it at the cgroup whose limit an allocation
          // failed at (the one killed is counted at the victim's). When both were reached while the
          // command ran (v1 counts a cap reached even where reclaim then succeeded), say the total:
          // its message names both caps
          if (memory.total && (await totalReached(memory)) > reachedBefore) return { cap: "total", ...sizes };
          if (await ownReached(memory, memoryDir, caps.residentBytes)) return { cap: "command", ...sizes };
          return { cap: "machine", ...sizes };
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

/**
 * Makes byteseek's memory folder the cap of all its commands together, at the default size (a
 * command's policy may name another); undefined where that cap cannot bind.
 */
async function capTotal(h: Hierarchy): Promise<TotalCap | undefined> {
  if (!h.v2) {
    // v1 holds a child to its parent's limit only with hierarchical accounting, which a folder
    // inherits when made and may turn on while it has no children (always on since Linux 5.11)
    const file = path.join(h.base, "memory.use_hierarchy");
    const on = async () => (await readFile(file, "utf8").catch(() => "")).trim() === "1";
    if (!(await on())) await writeFile(file, "1").catch(() => {});
    if (!(await on())) return undefined;
  }
  const defaultBytes = await defaultTotalBytes(h);
  return (await writeTotal(h, defaultBytes)) ? { defaultBytes, applied: defaultBytes } : undefined;
}

const MiB = 1024 ** 2;

/**
 * Half the memory the server may use — the machine's, or less where a cgroup above the server caps
 * it: the other half is the server's own (its heap, the store's cache), the kernel's and whatever
 * else the machine runs, so commands together cannot push it into the global OOM killer.
 */
export async function defaultTotalBytes(h: { dir: string; v2: boolean }): Promise<number> {
  let limit = totalmem();
  if (!h.v2) {
    // the least limit of this cgroup and those above it, as the kernel applies it
    const stat = await readFile(path.join(h.dir, "memory.stat"), "utf8").catch(() => "");
    for (const key of ["hierarchical_memory_limit", "hierarchical_memsw_limit"]) {
      const n = Number(new RegExp(`^${key} (\\d+)$`, "m").exec(stat)?.[1] ?? Number.NaN);
      if (n > 0) limit = Math.min(limit, n);
    }
  } else {
    for (let dir = h.dir; ; dir = path.dirname(dir)) {
      // "max" where unlimited; no file at the root
      const max = (await readFile(path.join(dir, "memory.max"), "utf8").catch(() => "")).trim();
      if (max === "") break;
      if (/^\d+$/.test(max)) limit = Math.min(limit, Number(max));
      if (dir === path.dirname(dir)) break;
    }
  }
  return Math.max(16 * MiB, Math.floor(limit / 2 / MiB) * MiB);
}

/** Writes the cap of all commands together on byteseek's memory folder; false where refused. */
async function writeTotal(h: Hierarchy, bytes: number): Promise<boolean> {
  const at = (file: string) => path.join(h.base, file);
  const value = String(bytes);
  try {
    // memory alone (swap is held per command, at its own cap): in v1 a memory+swap limit here would
    // be charged first, and the kernel stopped counting its failures (6.13), which tell this cap's
    // kills from a command's own
    await writeFile(at(h.v2 ? "memory.max" : "memory.limit_in_bytes"), value);
    return true;
  } catch {
    return false;
  }
}

/** How often an allocation failed at the cap of all commands together (byteseek's folder's own). */
async function totalReached(h: Hierarchy): Promise<number> {
  if (h.v2) {
    // memory.events counts the children's own too; memory.events.local (Linux 5.2) only the folder's
    const local = await count(path.join(h.base, "memory.events.local"), "oom");
    return local ?? (await count(path.join(h.base, "memory.events"), "oom")) ?? 0;
  }
  return (await count(path.join(h.base, "memory.failcnt"))) ?? 0;
}

/** Whether the command's memory reached its own cap (`capBytes`). */
async function ownReached(h: Hierarchy, dir: string, capBytes: number): Promise<boolean> {
  if (h.v2) return ((await count(path.join(dir, "memory.events"), "oom")) ?? 0) > 0;
  const at = (file: string) => count(path.join(dir, file));
  if (((await at("memory.failcnt")) ?? 0) + ((await at("memory.memsw.failcnt")) ?? 0) > 0) return true;
  // v1 charges memory+swap first, and since 6.13 counts no failure of it: its high-water mark tells,
  // as charges succeed page by page up to the cap (a margin for the last, larger ones)
  const highest = Math.max(
    (await at("memory.max_usage_in_bytes")) ?? 0,
    (await at("memory.memsw.max_usage_in_bytes")) ?? 0,
  );
  return highest >= capBytes - Math.min(capBytes / 8, 8 * MiB);
}

/** A counter file's number, or its `key N` line's; undefined where the file is not there. */
async function count(file: string, key?: string): Promise<number | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const n = key === undefined ? text.trim() : new RegExp(`^${key} (\\d+)$`, "m").exec(text)?.[1];
  return Number(n ?? 0) || 0;
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
