import { readdir, readFile } from "node:fs/promises";
import { CALL_MARK } from "./env.js";

/** Sends `signal` to the process group `pgid`; a group already gone is fine. */
export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is already gone
  }
}

/** The pids whose initial environment carries `BYTESEEK_CALL=<mark>` (this user's processes: others' are unreadable). */
export async function markedProcesses(mark: string): Promise<number[]> {
  const needle = Buffer.from(`\0${CALL_MARK}=${mark}\0`);
  const first = Buffer.from(`${CALL_MARK}=${mark}\0`);
  let names: string[];
  try {
    names = await readdir("/proc");
  } catch {
    return []; // no /proc: the process-group kill is all there is
  }
  const found: number[] = [];
  const pids = names.filter((n) => /^[0-9]+$/.test(n) && Number(n) !== process.pid);
  // two readers at a time: the scan leaves the rest of libuv's pool to the store's writes
  async function reader(): Promise<void> {
    for (let name = pids.pop(); name !== undefined; name = pids.pop()) {
      // /proc files are not FIFOs: reading one never blocks a pool thread for long
      const environ = await readFile(`/proc/${name}/environ`).catch(() => undefined);
      if (!environ) continue;
      if (environ.indexOf(needle) !== -1 || environ.subarray(0, first.length).equals(first))
        found.push(Number(name));
    }
  }
  await Promise.all([reader(), reader()]);
  return found;
}

/**
 * Ends every process a call started: its process group, then — for those that left it with
 * `setsid` or by daemonizing — every process whose environment carries the call's mark, scanning
 * /proc until a scan finds none (a fork loop is outpaced within `rounds` scans). Answers how many
 * were killed.
 */
export async function endCallProcesses(pgid: number | undefined, mark: string, rounds = 20): Promise<number> {
  return (await endMarkedProcesses(pgid, mark, rounds)).killed;
}

/**
 * As `endCallProcesses`, answering too how many marked processes were still listed when it gave up
 * waiting (0: every process of the mark is known gone, so the mark need not be remembered).
 */
export async function endMarkedProcesses(
  pgid: number | undefined,
  mark: string,
  rounds = 20,
): Promise<{ killed: number; left: number }> {
  let killed = 0;
  if (pgid !== undefined) killGroup(pgid, "SIGKILL");
  for (let i = 0; i < rounds; i++) {
    const pids = await markedProcesses(mark);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
        killed++;
      } catch {
        // gone already
      }
    }
  }
  // SIGKILL is sent, not yet suffered: on a loaded machine a killed process can still run (and be
  // listed) for a while. Wait, bounded, until none is left, so a stop means the processes are gone.
  const deadline = Date.now() + SETTLE_MS;
  let left = 0;
  do {
    const pids = await markedProcesses(mark);
    left = pids.length;
    if (left === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  } while (Date.now() < deadline);
  return { killed, left };
}

/** How long endCallProcesses waits for the processes it killed to be gone. */
const SETTLE_MS = 2000;
