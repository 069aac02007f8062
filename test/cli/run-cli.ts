import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built executable the golden tests run (`npm run build` makes it). */
export const KVSPACE_BIN = fileURLToPath(new URL("../../dist/cli/kvspace.js", import.meta.url));

export function assertBuilt(): void {
  if (!existsSync(KVSPACE_BIN)) throw new Error(`${KVSPACE_BIN} is missing: run \`npm run build\` first`);
}

export interface CliResult {
  stdout: string;
  stderr: string;
  /** The exit code; null when the process died of a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunCliOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Written to stdin, then stdin is closed; absent: stdin is closed at once. */
  stdin?: string;
  /** Send SIGINT once stdout holds this many lines (for `watch`, which runs until interrupted). */
  interruptAfterLines?: number;
  /** Told all of stdout so far at each chunk (to act on a long-running command's output). */
  onStdout?: (all: string) => void;
}

/** Runs `node dist/cli/kvspace.js <args>` as a child process and collects what it printed. */
export function runCli(args: readonly string[], options: RunCliOptions): Promise<CliResult> {
  const child = spawn(process.execPath, [KVSPACE_BIN, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let interrupted = false;
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    stdout += chunk;
    options.onStdout?.(stdout);
    const want = options.interruptAfterLines;
    if (want !== undefined && !interrupted && stdout.split("\n").length - 1 >= want) {
      interrupted = true;
      child.kill("SIGINT");
    }
  });
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdin.end(options.stdin ?? "");
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ stdout, stderr, code, signal }));
  });
}
