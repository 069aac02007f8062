import { constants } from "node:os";
import type { OutOfMemory } from "./cgroup.js";

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
 * What a command killed for want of memory is told (after "was" / "A process it started was"):
 * whose cap it was — its own, all commands' together, or the machine's — the setting that holds it,
 * and what to do about it.
 */
export function outOfMemoryMessage(oom: OutOfMemory): string {
  const own = sizeText(oom.residentBytes);
  const total = oom.totalResidentBytes === undefined ? undefined : sizeText(oom.totalResidentBytes);
  switch (oom.cap) {
    case "command":
      return `killed: out of memory (cap ${own} for all its processes together, the policy's limits.residentBytes); make it hold less memory at once (smaller inputs, fewer parallel jobs, a smaller heap), or ask a person to raise limits.residentBytes in the policy`;
    case "total":
      return `killed: out of memory (cap ${total ?? "unknown"} for all sandboxed commands running together — every run's commands and MCP servers — the policy's limits.totalResidentBytes; this command's own cap is ${own}, limits.residentBytes); other commands held memory at the same time: run it again once fewer commands run at once, make it hold less memory, or ask a person to raise limits.totalResidentBytes in the policy`;
    case "machine":
      return `killed: out of memory (the machine, or a cgroup above the server, ran out of memory; the command was under its own cap of ${own}${total ? ` and the total cap of ${total}` : ""}); run it again later, or make it hold less memory at once`;
  }
}

/** What a result's details say of a command killed for want of memory. */
export function outOfMemoryDetails(oom: OutOfMemory): Record<string, unknown> {
  const { cap, ...sizes } = oom;
  return { outOfMemory: true, memoryCap: cap, ...sizes };
}

/** 4 GiB, 64 MiB, or bytes when neither is whole. */
export function sizeText(bytes: number): string {
  for (const [unit, size] of [
    ["GiB", 1024 ** 3],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const)
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  return `${bytes} bytes`;
}
