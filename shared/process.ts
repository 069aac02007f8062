/** Whether a process id names a live process of this machine. */

/** True while `pid` names a process here (EPERM: it exists, owned by another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
