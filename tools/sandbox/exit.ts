import { constants } from "node:os";

/**
 * How a sandboxed command ended. The sandbox's pid 1 reports a command killed by signal n as exit
 * code 128+n (as a shell does): read back as the signal, so a kill (a limit, a timeout) says so.
 */
export function sandboxedExit(
  code: number | null,
  signal: NodeJS.Signals | null,
): { code: number | null; signal: NodeJS.Signals | null } {
  if (signal !== null || code === null || code <= 128 || code > 128 + 64) return { code, signal };
  const n = code - 128;
  const name = Object.entries(constants.signals).find(([, v]) => v === n)?.[0];
  return name ? { code: null, signal: name as NodeJS.Signals } : { code, signal };
}
