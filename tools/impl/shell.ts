import { realpath } from "node:fs/promises";
import path from "node:path";
import type { z } from "zod";
import { createTailBuffer } from "../call/cap.js";
import type { ShellImpl } from "../catalogue/declaration.js";
import { resolveWorkspacePath } from "../edit/workspace-path.js";
import { ToolError } from "../errors.js";
import { outOfMemoryDetails, outOfMemoryMessage, sandboxedExit } from "../sandbox/exit.js";
import type { ToolContext, ToolOutput } from "../types.js";
import { checkOptionValues, fillPlaceholders, pathParams } from "./placeholders.js";

type ShellImplSpec = z.infer<typeof ShellImpl>;

/** How long a process group gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2000;
/** Once the command has exited and its processes are ended, how long its output may still drain. */
const DRAIN_MS = 2000;

/**
 * Runs a `shell` impl: argv with `{param}` placeholders replaced by whole argument values, spawned
 * without a shell in its own process group; on abort (timeout or caller) the whole group is
 * killed. Output (stdout and stderr interleaved) keeps the last 2000 lines / 50 KB.
 */
export async function runShellImpl(
  impl: ShellImplSpec,
  args: Record<string, unknown>,
  ctx: ToolContext,
  params: Record<string, unknown> = {},
): Promise<ToolOutput> {
  checkOptionValues(impl.argv, args, params);
  const argv = impl.argv.map((a) => fillPlaceholders(a, args)).filter((a): a is string => a !== undefined);
  const [file, ...rest] = argv;
  if (!file) throw new ToolError("failed", "the command is empty after filling its placeholders");
  const cwd = await resolveCwd(impl.cwd ? (fillPlaceholders(impl.cwd, args) ?? ".") : ".", ctx.workspace);
  // a path parameter names a place in the workspace, seen from where the command runs
  for (const name of pathParams(params)) {
    const value = args[name];
    if (typeof value === "string") await resolveWorkspacePath(ctx.workspace, path.resolve(cwd, value));
  }
  const declared: Record<string, string> = {};
  for (const [k, v] of Object.entries(impl.env ?? {})) declared[k] = fillPlaceholders(v, args) ?? "";
  const env = await ctx.commands.env(declared);
  ctx.signal.throwIfAborted();

  const out = createTailBuffer();
  const started = Date.now();
  const child = await ctx.commands.spawn([file, ...rest], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  const stdout = child.stdout!; // both piped above
  const stderr = child.stderr!;
  stdout.on("data", (c: Buffer) => out.push(c));
  stderr.on("data", (c: Buffer) => out.push(c));

  let killTimer: NodeJS.Timeout | undefined;
  function killGroup(sig: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      // The group is already gone.
    }
  }
  function onAbort(): void {
    killGroup("SIGTERM");
    killTimer = setTimeout(() => killGroup("SIGKILL"), KILL_GRACE_MS);
    killTimer.unref();
  }
  ctx.signal.addEventListener("abort", onAbort, { once: true });

  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    function wait(resolve) {
      child.once("error", (error) => resolve({ code: null, signal: null, error }));
      child.once("exit", (code, signal) =>
        resolve(ctx.commands.sandboxed ? sandboxedExit(code, signal) : { code, signal }),
      );
    },
  );
  ctx.signal.removeEventListener("abort", onAbort);
  if (killTimer) clearTimeout(killTimer);
  // Nothing it started outlives the call: its group, and whatever left the group, by its mark.
  await ctx.commands.endProcesses(child.pid);
  if (!ended.error) {
    // what is still in the pipes drains; a process that escaped the mark may hold them, so not forever
    let late: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((r) => (late = setTimeout(r, DRAIN_MS)))]);
    clearTimeout(late);
    stdout.destroy();
    stderr.destroy();
  }

  const { text: output, truncated, bytes, lines } = out.text();
  const oomCap = await ctx.commands.outOfMemory();
  const details = {
    argv,
    cwd,
    exitCode: ended.code,
    signal: ended.signal,
    bytes,
    lines,
    truncated,
    ...(oomCap !== undefined ? outOfMemoryDetails(oomCap) : {}),
  };
  const shown = output.length ? `\n${output}` : " (no output)";
  // in the sandbox a missing program is told by whichever execs it (prlimit, or bwrap itself where a
  // cgroup's sh set the limits): the same answer as outside
  if (
    ctx.commands.sandboxed &&
    ((ended.code === 127 && output.startsWith("prlimit: failed to execute")) ||
      (ended.code === 1 && /^bwrap: execvp [^\n]*: No such file or directory/.test(output)))
  )
    ended.error = Object.assign(new Error(output.trim()), { code: "ENOENT" });
  if (ended.error) {
    const code = (ended.error as NodeJS.ErrnoException).code;
    throw new ToolError(
      "failed",
      code === "ENOENT"
        ? `cannot run "${file}": no such program (check the declaration's argv)`
        : `cannot run "${file}": ${ended.error.message}`,
      { details },
    );
  }
  if (ctx.signal.aborted) {
    const reason = ctx.signal.reason;
    const base = reason instanceof ToolError ? reason : new ToolError("aborted", "the call was aborted");
    throw new ToolError(
      base.code,
      `${base.message}; the command's process group was killed. Output so far:${shown}`,
      {
        details: { ...details, ms: Date.now() - started },
      },
    );
  }
  // a shell may outlive the process killed in it, even exit 0: its output is cut short all the same
  if (oomCap !== undefined)
    throw new ToolError(
      "killed",
      ended.signal
        ? `"${file}" was ${outOfMemoryMessage(oomCap)}. Output:${shown}`
        : `a process of "${file}" was ${outOfMemoryMessage(oomCap)}; "${file}" then exited with code ${ended.code}. Output:${shown}`,
      { details },
    );
  if (ended.signal)
    throw new ToolError("killed", `"${file}" was killed by ${ended.signal}. Output:${shown}`, { details });
  if (ended.code !== 0)
    throw new ToolError("exit_code", `"${file}" exited with code ${ended.code}. Output:${shown}`, {
      details,
    });
  return { text: output.length ? output : "(no output; exit code 0)", details };
}

/** The working directory: relative to the workspace, and inside it once symlinks are resolved. */
async function resolveCwd(cwd: string, workspace: string): Promise<string> {
  const wanted = path.resolve(workspace, cwd);
  let real: string;
  try {
    real = await realpath(wanted);
  } catch {
    throw new ToolError("file_not_found", `the working directory ${wanted} does not exist`);
  }
  const root = workspace.endsWith(path.sep) ? workspace : workspace + path.sep;
  if (real !== workspace && !real.startsWith(root))
    throw new ToolError(
      "outside_root",
      `the working directory ${wanted} is outside the workspace ${workspace}`,
    );
  return real;
}
