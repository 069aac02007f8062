/**
 * Does the sandbox work here? Asked once per runner by starting `true` in the very sandbox commands
 * get (same namespaces, mounts and limits): a missing binary, a kernel or container that refuses
 * user namespaces, or another platform all answer a cause a person can act on.
 */
import { spawn } from "node:child_process";
import { sandboxArgv } from "./argv.js";
import type { SandboxCaps } from "./cgroup.js";
import { SANDBOX_OFF_WARNING, SandboxLimits } from "./settings.js";
import { resolveView } from "./view.js";

export type SandboxStatus = { ok: true } | { ok: false; cause: string };

/** How long the probe may take before the sandbox counts as unavailable. */
const PROBE_TIMEOUT_MS = 10_000;

export async function probeSandbox(
  bwrap: string,
  platform: NodeJS.Platform = process.platform,
): Promise<SandboxStatus> {
  if (platform !== "linux")
    return { ok: false, cause: `the sandbox (bubblewrap) runs on Linux only, and this is ${platform}` };
  const mounts = await resolveView({ roots: [], hidden: [] });
  const cmd = sandboxArgv(
    { bwrap, mounts, limits: SandboxLimits.parse({}), network: { mode: "none" }, cwd: "/" },
    ["true"],
  );
  return new Promise<SandboxStatus>((resolve) => {
    let stderr = "";
    const child = spawn(cmd.file, cmd.args, {
      stdio: ["ignore", "ignore", "pipe"],
      env: { PATH: "/usr/bin:/bin" },
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), PROBE_TIMEOUT_MS);
    child.stderr.on("data", (c: Buffer) => {
      stderr = (stderr + c.toString("utf8")).slice(-1000);
    });
    child.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({
        ok: false,
        cause:
          err.code === "ENOENT"
            ? `bubblewrap is not installed (no program "${bwrap}")`
            : `bubblewrap ("${bwrap}") cannot start: ${err.message}`,
      });
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve({ ok: true });
      const said = stderr.trim().split("\n").slice(-2).join(" ");
      resolve({
        ok: false,
        cause: `bubblewrap could not make a sandbox (${said || (signal ? `killed by ${signal}` : `exit code ${code}`)}); the kernel or the container may refuse user namespaces`,
      });
    });
  });
}

/** What a refused command's result says: the cause, and the settings that change it. */
export function unavailableMessage(cause: string): string {
  return [
    `Commands run only inside byteseek's sandbox, and it is unavailable here: ${cause}.`,
    "Do not retry: a person must either install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow user namespaces (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0; in Docker, run with --security-opt seccomp=unconfined --security-opt apparmor=unconfined),",
    'or set "sandbox": "off" in the policy (/byteseek/policy) to run commands with the server\'s own rights.',
  ].join(" ");
}

/**
 * Whether commands run sandboxed now: `on`; `off` (the policy's explicit choice); or `unavailable`
 * (every command is refused). With a warning a person reads — the start line, `GET /v1/info`, the
 * web page's banner — saying what it means and how to turn the sandbox on; on, which caps bind,
 * warned when a command's memory is not capped as a whole.
 */
export type SandboxState =
  | { state: "on"; caps?: SandboxCaps; warning?: string }
  | { state: "off" | "unavailable"; warning: string };

/** What the start line and `GET /v1/info` say where no memory cgroup can be made. */
export const NO_MEMORY_CAP_WARNING =
  "warning: the server cannot make memory cgroups here (cgroup v1's memory controller needs root; cgroup v2 a folder whose memory controller the server may enable for its children): limits.residentBytes does not bind, and a command's memory is held only per process, by limits.memoryBytes (address space); run the server as root or in such a cgroup to cap it";

/** What the start line and `GET /v1/info` say where commands' memory is capped each, not together. */
export const NO_TOTAL_MEMORY_CAP_WARNING =
  "warning: the server's memory cgroup folder cannot cap all commands together here (cgroup v1 without hierarchical accounting, or a folder whose memory.limit_in_bytes / memory.max it may not write): limits.totalResidentBytes does not bind, so many commands at once, each under limits.residentBytes, can still run the machine out of memory; run the server as root or in a cgroup v2 folder it may manage";

export async function sandboxState(
  mode: "on" | "off",
  status: () => Promise<SandboxStatus>,
  caps?: () => Promise<SandboxCaps>,
): Promise<SandboxState> {
  if (mode === "off") return { state: "off", warning: SANDBOX_OFF_WARNING };
  const s = await status();
  if (!s.ok) return { state: "unavailable", warning: `warning: ${unavailableMessage(s.cause)}` };
  const held = await caps?.();
  if (!held) return { state: "on" };
  if (!held.memory) return { state: "on", caps: held, warning: NO_MEMORY_CAP_WARNING };
  return held.totalMemory
    ? { state: "on", caps: held }
    : { state: "on", caps: held, warning: NO_TOTAL_MEMORY_CAP_WARNING };
}
