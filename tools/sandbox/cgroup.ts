/**
 * A pids cgroup per sandboxed command, where the server can make one. RLIMIT_NPROC does not bind a
 * process whose user is root outside its namespace (the kernel exempts uid 0 from it, and a sandboxed
 * command of a server running as root is uid 0 outside), so a fork bomb is held by the cgroup there.
 */
import { mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";

export interface PidsCgroups {
  /** The folder the per-command cgroups are made in. */
  readonly base: string;
  /** Makes the cgroup `name` holding at most `max` processes; answers its cgroup.procs file. */
  make(name: string, max: number): Promise<string>;
  /** Removes it once its processes are gone (bounded wait: they may still be exiting). */
  remove(name: string): Promise<void>;
  /** Removes byteseek's folder (once every command's cgroup is removed). */
  close(): Promise<void>;
}

/**
 * Finds a pids hierarchy this process may write (cgroup v1's pids controller, or a v2 folder with
 * the pids controller), and makes byteseek's folder in it; undefined where none is writable.
 */
export async function openPidsCgroups(root = "/sys/fs/cgroup"): Promise<PidsCgroups | undefined> {
  const own = await readFile("/proc/self/cgroup", "utf8").catch(() => "");
  const candidates: string[] = [];
  for (const line of own.split("\n")) {
    const [, controllers, at] = line.split(":");
    if (controllers === undefined || at === undefined) continue;
    if (controllers.split(",").includes("pids")) candidates.push(path.join(root, "pids", at));
    if (controllers === "") candidates.push(path.join(root, at), path.join(root, "unified", at));
  }
  for (const dir of candidates) {
    const base = path.join(dir, `byteseek-${process.pid}`);
    try {
      await mkdir(base, { recursive: true });
      // v2: a child gets pids.max only when its parent enables the controller for its children
      await writeFile(path.join(base, "cgroup.subtree_control"), "+pids").catch(() => {});
      const probe = path.join(base, "probe");
      await mkdir(probe, { recursive: true });
      await writeFile(path.join(probe, "pids.max"), "8");
      await rmdir(probe);
      return pidsCgroups(base);
    } catch {
      await rmdir(base).catch(() => {});
    }
  }
  return undefined;
}

function pidsCgroups(base: string): PidsCgroups {
  return {
    base,
    async make(name, max) {
      const dir = path.join(base, name);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, "pids.max"), String(max));
      return path.join(dir, "cgroup.procs");
    },
    async remove(name) {
      const dir = path.join(base, name);
      for (let i = 0; i < 100; i++) {
        try {
          await rmdir(dir);
          return;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    },
    async close() {
      await rmdir(base).catch(() => {});
    },
  };
}
