/** Asking whether a process is still there, as the tests of process containment do. */
import { readdirSync, readFileSync } from "node:fs";

/** True while a signal can reach `pid` (a zombie nobody reaped yet included). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True once `pid` is gone (or a zombie nobody reaped yet: it runs nothing any more). */
export function gone(pid: number): boolean {
  if (!alive(pid)) return true;
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") ?? false;
  } catch {
    return true;
  }
}

/** Waits (bounded: about 20 s, as test files share the cores) until `pid` is gone; answers whether it is. */
export async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 2000 && !gone(pid); i++) await new Promise((r) => setTimeout(r, 10));
  return gone(pid);
}

/**
 * Host pids whose command line holds `token`: a sandboxed command sees its own pid namespace, so
 * the pids it prints mean nothing outside; a token in its argv (`sleep 300.<digits>`) finds it.
 */
export function pidsWith(token: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (cmdline.includes(token) && !gone(Number(name))) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Waits (bounded: about 20 s, as test files share the cores) until no live process holds `token`; answers whether none does. */
export async function waitNoneWith(token: string): Promise<boolean> {
  for (let i = 0; i < 2000 && pidsWith(token).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
  return pidsWith(token).length === 0;
}

/** A sleep duration unique to one test (`300.<digits>`): its token finds the process on the host. */
export function uniqueSleep(): string {
  return `300.${String(Math.floor(Math.random() * 1e9)).padStart(9, "0")}`;
}
