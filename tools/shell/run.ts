import path from "node:path";
import { z } from "zod";
import { defineBuiltin } from "../catalogue/declare.js";
import { ToolError } from "../errors.js";
import { killGroup } from "../process/contain.js";
import { OutputSpool } from "../process/output-spool.js";
import type { OutOfMemory } from "../sandbox/cgroup.js";
import { outOfMemoryDetails, outOfMemoryMessage, sandboxedExit } from "../sandbox/exit.js";
import type { BuiltinTool, ToolContext } from "../types.js";
import { readTail } from "./output-tail.js";

const RunArgs = z
  .object({
    command: z.string().min(1).describe("Bash command line, run with bash -c in the workspace root."),
    timeout: z
      .number()
      .min(0.001)
      .optional()
      .describe(
        "Timeout in seconds, from 0.001 to the policy's maximum (default from the policy, 120). On timeout every process the command started is killed.",
      ),
  })
  .strict();

const MAX_LINES = 2000;
const MAX_BYTES = 50 * 1024;
/** After SIGTERM, the group gets this long before SIGKILL. */
const GRACE_MS = 1000;
/** Once the command has exited and its processes are ended, how long its output may still drain. */
const DRAIN_MS = 2000;

type Ending = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stop?: "timeout" | "aborted";
  /** The memory cap a process of it was killed at. */
  outOfMemory?: OutOfMemory;
};

const timeoutOf = (a: { timeout?: number | undefined }) =>
  a.timeout === undefined ? undefined : Math.max(1, Math.round(a.timeout * 1000));

/**
 * Runs bash -c in its own process group, with the call's environment, stdout and stderr on one
 * pipe (so they interleave as written) into a capped spool; when it exits — or is stopped — every
 * process it started is ended (the group, and the ones that left it, by their mark).
 */
async function runContained(
  command: string,
  ctx: ToolContext,
  spool: OutputSpool,
  timeoutMs: number,
): Promise<Ending> {
  const env = await ctx.commands.env();
  // the inner bash gets the command exactly as bash -c would, with stderr joined to stdout
  const child = await ctx.commands.spawn(["bash", "-c", 'exec bash -c "$1" 2>&1', "bash", command], {
    cwd: ctx.workspace,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdout = child.stdout!; // piped above
  stdout.pipe(spool);
  // the command's stderr is joined to stdout above; what comes here is the sandbox's own complaint
  child.stderr!.on("data", (c: Buffer) => {
    if (!spool.writableEnded) spool.write(c);
  });
  const drained = new Promise<void>((resolve) => {
    spool.once("finish", resolve);
    spool.once("error", () => resolve());
  });
  const ending = await new Promise<Ending>((resolve, reject) => {
    let stop: Ending["stop"];
    let hardKill: NodeJS.Timeout | undefined;
    const halt = (why: "timeout" | "aborted") => {
      if (stop || child.pid === undefined) return;
      stop = why;
      killGroup(child.pid, "SIGTERM");
      hardKill = setTimeout(() => killGroup(child.pid!, "SIGKILL"), GRACE_MS);
    };
    const timer = setTimeout(() => halt("timeout"), timeoutMs);
    const onAbort = () => {
      const reason: unknown = ctx.signal.reason;
      halt(reason instanceof ToolError && reason.code === "timeout" ? "timeout" : "aborted");
    };
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener("abort", onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      clearTimeout(hardKill);
      ctx.signal.removeEventListener("abort", onAbort);
    };
    child.once("error", (err) => {
      done();
      reject(err);
    });
    child.once("exit", (exitCode, exitSignal) => {
      done();
      const { code, signal } = ctx.commands.sandboxed
        ? sandboxedExit(exitCode, exitSignal)
        : { code: exitCode, signal: exitSignal };
      resolve({ code, signal, ...(stop ? { stop } : {}) });
    });
  });
  // nothing the command started outlives the call: background jobs, setsid, daemons
  await ctx.commands.endProcesses(child.pid);
  let late: NodeJS.Timeout | undefined;
  await Promise.race([
    drained,
    new Promise<void>((resolve) => {
      late = setTimeout(() => {
        // a process that escaped the mark (env -i) still holds the pipe: stop reading it
        stdout.unpipe(spool);
        stdout.destroy();
        spool.end();
        resolve();
      }, DRAIN_MS);
    }),
  ]);
  clearTimeout(late);
  await drained;
  const cap = await ctx.commands.outOfMemory();
  return cap === undefined ? ending : { ...ending, outOfMemory: cap };
}

/** shell.run: a bash command in the workspace, output capped to its tail. */
export function createRunTool(): BuiltinTool {
  return defineBuiltin({
    name: "shell.run",
    description:
      "Run a bash command in the workspace root. Output (stdout and stderr interleaved) is cut to its last 2000 lines or 50 KB, with the byte count of all of it; the exit code is reported, and a non-zero exit is an error. Every process the command starts ends with the call, background ones included.",
    snippet: "run a bash command in the workspace (tests, builds, git, …)",
    guidelines: [
      "Use shell.run for builds, tests and git; use the edit tools to read and change files, not cat, sed or echo.",
      "Give long-running commands a timeout in seconds; a command that does not finish in time is killed with every process it started.",
    ],
    schema: RunArgs,
    sequential: true,
    awaitsIntent: true,
    callTimeoutMs: (args) => timeoutOf(args as { timeout?: number }),
    async execute(a, ctx) {
      const asked = timeoutOf(a);
      if (asked !== undefined && asked > ctx.maxTimeoutMs)
        throw new ToolError(
          "invalid_args",
          `timeout ${a.timeout} s is beyond the policy's maximum of ${ctx.maxTimeoutMs / 1000} s; give a timeout from 0.001 to ${ctx.maxTimeoutMs / 1000} seconds.`,
          { details: { timeout: a.timeout, maxTimeoutMs: ctx.maxTimeoutMs } },
        );
      const timeoutMs = asked ?? ctx.defaultTimeoutMs;
      const logFile = path.join(await ctx.commands.scratch(), "output.log");
      const spool = new OutputSpool(logFile, ctx.commands.outputCapBytes);
      const started = Date.now();
      let end: Ending;
      try {
        end = await runContained(a.command, ctx, spool, timeoutMs);
      } catch (err) {
        if (err instanceof ToolError) throw err; // the sandbox refused: its own message says why
        throw new ToolError("failed", `The command could not be started: ${(err as Error).message}.`, {
          details: { command: a.command },
          cause: err,
        });
      }
      const ms = Date.now() - started;
      const tail = await readTail(logFile, MAX_LINES, MAX_BYTES, { bytes: spool.bytes, lines: spool.lines });
      const parts = [tail.text === "" ? "(no output)" : tail.text];
      if (tail.truncated) {
        parts.push(
          `[Output truncated: showing the last ${tail.shownLines} of ${tail.totalLines} lines (${tail.bytes} bytes in all).]`,
        );
      }
      const details: Record<string, unknown> = {
        command: a.command,
        exitCode: end.code,
        signal: end.signal,
        ms,
        bytes: tail.bytes,
        truncated: tail.truncated,
      };
      if (end.stop === "timeout") {
        parts.push(
          `Command timed out after ${timeoutMs} ms and was killed with every process it started. Give a larger timeout, or make the command finish sooner.`,
        );
        throw new ToolError("timeout", parts.join("\n"), { details: { ...details, timeoutMs } });
      }
      if (end.stop === "aborted") {
        parts.push("Command was stopped because the call was aborted; every process it started was killed.");
        throw new ToolError("aborted", parts.join("\n"), { details });
      }
      if (end.outOfMemory !== undefined) {
        // a shell may outlive the process killed in it, even exit 0: its output is cut short all the same
        const said = outOfMemoryMessage(end.outOfMemory);
        parts.push(
          end.signal
            ? `Command was ${said}.`
            : `A process of the command was ${said}. The command then exited with code ${end.code}.`,
        );
        throw new ToolError("killed", parts.join("\n"), {
          details: { ...details, ...outOfMemoryDetails(end.outOfMemory) },
        });
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
  });
}
