import { PassThrough, type Readable, Writable } from "node:stream";
import { dispatchKvspace } from "../../cli/dispatch.js";
import type { KvspaceDeps } from "../../cli/run.js";
import type { CliResult, RunCliOptions } from "./run-cli.js";

/**
 * Runs a kvspace command line (`dispatchKvspace`: the quick path, else `runKvspace`) in this process with real streams, the way kvspace.ts binds a process to it:
 * what a spawned `node dist/cli/kvspace.js` would print, without the cost of starting Node.
 * `interruptAfterLines` aborts the signal SIGINT would abort; `hooks.stdin` is a stream the test writes
 * as the command runs (a person answering a prompt), instead of `options.stdin` written at once.
 */
export async function runInProcess(
  args: readonly string[],
  options: RunCliOptions,
  deps: KvspaceDeps = {},
  hooks: {
    signal?: AbortSignal;
    onStdout?: (all: string) => void;
    onStderr?: (all: string) => void;
    stdin?: Readable;
  } = {},
): Promise<CliResult> {
  const controller = new AbortController();
  hooks.signal?.addEventListener("abort", () => controller.abort(), { once: true });
  let stdout = "";
  let stderr = "";
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      stdout += chunk.toString("utf8");
      hooks.onStdout?.(stdout);
      const want = options.interruptAfterLines;
      if (want !== undefined && !controller.signal.aborted && stdout.split("\n").length - 1 >= want)
        controller.abort();
      done();
    },
  });
  const err = new Writable({
    write(chunk: Buffer, _enc, done) {
      stderr += chunk.toString("utf8");
      hooks.onStderr?.(stderr);
      done();
    },
  });
  let stdin = hooks.stdin;
  if (!stdin) {
    const written = new PassThrough();
    written.end(options.stdin ?? "");
    stdin = written;
  }
  const code = await dispatchKvspace(
    args,
    {
      stdin,
      stdout: out,
      stderr: err,
      env: options.env,
      cwd: options.cwd ?? process.cwd(),
      signal: controller.signal,
    },
    deps,
  );
  return { stdout, stderr, code, signal: null };
}
