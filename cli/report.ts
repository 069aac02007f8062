import { isTreeError } from "../tree/errors.js";
import { isCliError } from "./errors.js";

/**
 * Prints an error as its message alone (the stack only with KVSPACE_DEBUG) and gives its exit
 * code: a CliError's own, 1 for the rest; a closed pipe (`kvspace export | head`) is 0.
 */
export function report(err: unknown, io: { stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv }): number {
  // The reader went away: stop quietly, as other filters do.
  if ((err as NodeJS.ErrnoException | undefined)?.code === "EPIPE") return 0;
  if (isCliError(err)) {
    io.stderr.write(`${err.message}\n`);
    return err.exitCode;
  }
  if (isTreeError(err)) {
    io.stderr.write(`${err.message}\n`);
    return 1;
  }
  const debug = io.env.KVSPACE_DEBUG !== undefined && io.env.KVSPACE_DEBUG !== "";
  io.stderr.write(
    `${debug && err instanceof Error ? err.stack : err instanceof Error ? err.message : String(err)}\n`,
  );
  return 1;
}
