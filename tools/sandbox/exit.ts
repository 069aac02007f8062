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

/**
 * What a command killed at its memory cap is told (after "was" / "A process it started was"): the
 * cap, the setting that holds it, and what to do about it.
 */
export function outOfMemoryMessage(capBytes: number): string {
  return `killed: out of memory (cap ${sizeText(capBytes)} for all its processes together, the policy's limits.residentBytes); make it hold less memory at once (smaller inputs, fewer parallel jobs, a smaller heap), or ask a person to raise limits.residentBytes in the policy`;
}

/** 4 GiB, 64 MiB, or bytes when neither is whole. */
function sizeText(bytes: number): string {
  for (const [unit, size] of [
    ["GiB", 1024 ** 3],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const)
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return `${bytes} bytes`;
}
