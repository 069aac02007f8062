/**
 * The `kvspace` process: binds the process's streams, signals and environment to a command line
 * (dispatch.ts). Loaded by kvspace.ts once the compile cache is on.
 */
import { withdrawSecrets } from "../tools/process/secrets.js";
import { dispatchKvspace } from "./dispatch.js";

// The token, model keys and every other secret leave kvspace's own environment (and
// /proc/<pid>/environ) before anything can start a command (`kvspace call shell.run`); the
// settings are read from this copy.
const env = withdrawSecrets().env;

const controller = new AbortController();
const interrupt = () => {
  // A second signal means "now": give up on a clean close.
  if (controller.signal.aborted) process.exit(130);
  controller.abort();
};
process.on("SIGINT", interrupt);
process.on("SIGTERM", interrupt);
// A closed pipe (`kvspace export | head`) ends the command instead of crashing the process.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") controller.abort();
  else throw err;
});

process.exitCode = await dispatchKvspace(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env,
  cwd: process.cwd(),
  signal: controller.signal,
});
process.off("SIGINT", interrupt);
process.off("SIGTERM", interrupt);
