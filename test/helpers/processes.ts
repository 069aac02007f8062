/** Asking whether a process is still there, as the tests of process containment do. */
import { readFileSync } from "node:fs";

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

/** Waits (bounded: about 5 s) until `pid` is gone; answers whether it is. */
export async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 500 && !gone(pid); i++) await new Promise((r) => setTimeout(r, 10));
  return gone(pid);
}
