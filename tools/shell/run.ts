import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { open, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { z } from "zod";
import { declareBuiltin, parseArgs } from "../edit/declare.js";
import { ToolError } from "../errors.js";
import type { BuiltinTool, ToolContext, ToolOutput } from "../types.js";
import { readTail } from "./output-tail.js";

export const RunArgs = z
  .object({
    command: z.string().min(1).describe("Bash command line, run with bash -c in the workspace root."),
    timeout: z
      .number()
      .positive()
      .optional()
      .describe(
        "Timeout in seconds (default from the policy, 120). On timeout the whole process group is killed.",
      ),
  })
  .strict();
export type RunArgs = z.infer<typeof RunArgs>;

const MAX_LINES = 2000;
const MAX_BYTES = 50 * 1024;
/** After SIGTERM, the group gets this long before SIGKILL. */
const GRACE_MS = 1000;

type Ending = { code: number | null; signal: NodeJS.Signals | null; stop?: "timeout" | "aborted" };

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** Runs bash -c in its own process group, output (stdout and stderr interleaved) going to `logFile`. */
async function runToLog(
  command: string,
  cwd: string,
  logFile: string,
  timeoutMs: number,
  signal: AbortSignal,
) {
  const log = await open(logFile, "w", 0o600);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn("bash", ["-c", command], { cwd, detached: true, stdio: ["ignore", log.fd, log.fd] });
  } catch (err) {
    await log.close();
    throw err;
  }
  // Listen before anything else is awaited: a fast command can exit during the next await.
  const ending = new Promise<Ending>((resolve, reject) => {
    let stop: Ending["stop"];
    let hardKill: NodeJS.Timeout | undefined;
    const halt = (why: "timeout" | "aborted") => {
      if (stop || child.pid === undefined) return;
      stop = why;
      killGroup(child.pid, "SIGTERM");
      hardKill = setTimeout(() => killGroup(child.pid!, "SIGKILL"), GRACE_MS);
    };
    const timer = setTimeout(() => halt("timeout"), timeoutMs);
    const onAbort = () => halt("aborted");
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      clearTimeout(hardKill);
      signal.removeEventListener("abort", onAbort);
    };
    child.once("error", (err) => {
      done();
      reject(err);
    });
    child.once("exit", (code, sig) => {
      done();
      // what is left of a stopped group goes now
      if (stop && child.pid !== undefined) killGroup(child.pid, "SIGKILL");
      resolve({ code, signal: sig, ...(stop ? { stop } : {}) });
    });
  });
  // The child holds its own copy of the descriptor; ours can go now.
  await log.close();
  return ending;
}

/** shell.run: a bash command in the workspace, output capped to its tail. */
export function createRunTool(): BuiltinTool {
  const name = "shell.run";
  return {
    ref: name,
    declaration: declareBuiltin({
      name,
      description:
        "Run a bash command in the workspace root. Output (stdout and stderr interleaved) is cut to its last 2000 lines or 50 KB, with the full output kept in a temp file; the exit code is reported, and a non-zero exit is an error.",
      snippet: "run a bash command in the workspace (tests, builds, git, …)",
      guidelines: [
        "Use shell.run for builds, tests and git; use the edit tools to read and change files, not cat, sed or echo.",
        "Give long-running commands a timeout in seconds; a command that does not finish in time is killed with its whole process group.",
      ],
      schema: RunArgs,
      sequential: true,
    }),
    async execute(args, ctx: ToolContext): Promise<ToolOutput> {
      const a = parseArgs(RunArgs, args, name);
      const timeoutMs = a.timeout !== undefined ? Math.round(a.timeout * 1000) : ctx.defaultTimeoutMs;
      const logFile = path.join(tmpdir(), `byteseek-shell-${randomBytes(8).toString("hex")}.log`);
      const started = Date.now();
      let end: Ending;
      try {
        end = await runToLog(a.command, ctx.workspace, logFile, timeoutMs, ctx.signal);
      } catch (err) {
        await unlink(logFile).catch(() => undefined);
        throw new ToolError("failed", `The command could not be started: ${(err as Error).message}.`, {
          details: { command: a.command },
          cause: err,
        });
      }
      const ms = Date.now() - started;
      const tail = await readTail(logFile, MAX_LINES, MAX_BYTES);
      if (!tail.truncated) await unlink(logFile).catch(() => undefined);
      const parts = [tail.text === "" ? "(no output)" : tail.text];
      if (tail.truncated) {
        parts.push(
          `[Output truncated: showing the last ${tail.shownLines} of ${tail.totalLines} lines (${tail.bytes} bytes in all). Full output: ${logFile}]`,
        );
      }
      const details: Record<string, unknown> = {
        command: a.command,
        exitCode: end.code,
        signal: end.signal,
        ms,
        truncated: tail.truncated,
        ...(tail.truncated ? { fullOutput: logFile } : {}),
      };
      if (end.stop === "timeout") {
        parts.push(
          `Command timed out after ${timeoutMs / 1000} s and was killed with its whole process group. Give a larger timeout, or make the command finish sooner.`,
        );
        throw new ToolError("timeout", parts.join("\n"), { details: { ...details, timeoutMs } });
      }
      if (end.stop === "aborted") {
        parts.push("Command was stopped because the call was aborted; its process group was killed.");
        throw new ToolError("aborted", parts.join("\n"), { details });
      }
      if (end.signal) {
        parts.push(`Command was killed by signal ${end.signal}.`);
        throw new ToolError("killed", parts.join("\n"), { details });
      }
      if (end.code !== 0) {
        parts.push(`Command exited with code ${end.code}.`);
        throw new ToolError("exit_code", parts.join("\n"), { details });
      }
      parts.push("Exit code: 0");
      return { text: parts.join("\n"), details };
    },
  };
}
