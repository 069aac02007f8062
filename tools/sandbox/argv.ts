/**
 * The bubblewrap command line of one sandboxed command: a pure function of the view (view.ts), the
 * limits and the network, so what a command can reach is read in one place.
 */
import type { SandboxLimits } from "./settings.js";

/** One step of the filesystem a command sees, applied in order. */
export type MountStep =
  | { op: "ro-bind" | "bind"; src: string; dest: string }
  | { op: "symlink"; target: string; dest: string }
  /** An empty, read-only folder nobody may open over a folder: reading it is "Permission denied". */
  | { op: "hide-dir"; dest: string }
  /** An empty, read-only file nobody may open over a file (`hiddenFile`). */
  | { op: "hide-file"; dest: string };

/** How the command reaches the network: not at all, or only through byteseek's egress proxy. */
export type SandboxNetwork = { mode: "none" } | { mode: "proxy"; socketPath: string };

/** Where the egress proxy's socket is bound inside, and the port the bridge listens on there. */
export const PROXY_SOCKET_INSIDE = "/run/byteseek/egress.sock";
export const PROXY_PORT = 3128;

/** The private folders every command gets: its own /tmp, and HOME inside it. */
export const TMP_INSIDE = "/tmp";
export const HOME_INSIDE = "/tmp/home";

export interface SandboxArgvSpec {
  /** The bubblewrap binary. */
  bwrap: string;
  /** The filesystem, in order, after the system's /proc, /dev and /tmp. */
  mounts: readonly MountStep[];
  limits: SandboxLimits;
  network: SandboxNetwork;
  /** The working directory inside (a path the mounts show). */
  cwd: string;
  /**
   * An empty host file of mode 000, bound over hidden files: the command runs without capabilities,
   * so opening it is refused (without one, /dev/null: reads as empty).
   */
  hiddenFile?: string;
  /** The cgroups the server made for the command (pids, memory), when it could make any. */
  cgroup?: {
    /** The cgroup.procs files whose writing puts the sandbox in them, before bubblewrap starts. */
    procs: readonly string[];
    /** Whether a pids cgroup is among them: it holds root too, so RLIMIT_NPROC is not needed. */
    pids: boolean;
  };
  /**
   * The command is the kernel's first choice when memory runs out, the server's last: oom_score_adj
   * 1000, set by the shell that starts bubblewrap (inherited by every process of the command; as
   * root it is also the least the command may set again).
   */
  oomFirst?: boolean;
}

/** Never fatal: where it cannot be set the command runs as likely a victim as the server. */
const OOM_FIRST = "{ echo 1000 > /proc/self/oom_score_adj; } 2>/dev/null || true";

export interface SandboxCommand {
  file: string;
  args: string[];
  /** Variables the sandbox sets over the command's own (HOME, TMPDIR, the proxy). */
  env: Record<string, string>;
}

/**
 * The argv that runs `command` in a new user, mount, PID, IPC, UTS, cgroup and network namespace,
 * with no capabilities, no new privileges (bubblewrap always sets it), a new session (no TIOCSTI on
 * the server's terminal), dying with its parent, under the limits (the cgroup shell's ulimit, else prlimit: bubblewrap has no
 * rlimit flag), and — when the server made them — in pids and memory cgroups of its own.
 */
export function sandboxArgv(spec: SandboxArgvSpec, command: readonly string[]): SandboxCommand {
  const { limits } = spec;
  const args: string[] = [
    "--unshare-user",
    // no user namespace of its own inside: no capabilities to win back, even over its own mounts
    "--disable-userns",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup-try",
    "--hostname",
    "sandbox",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--size",
    String(limits.tmpBytes),
    "--tmpfs",
    TMP_INSIDE,
    "--dir",
    HOME_INSIDE,
  ];
  for (const m of spec.mounts) {
    switch (m.op) {
      case "ro-bind":
      case "bind":
        args.push(`--${m.op}`, m.src, m.dest);
        break;
      case "symlink":
        args.push("--symlink", m.target, m.dest);
        break;
      case "hide-dir":
        args.push("--perms", "0000", "--size", "4096", "--tmpfs", m.dest, "--remount-ro", m.dest);
        break;
      case "hide-file":
        args.push("--ro-bind", spec.hiddenFile ?? "/dev/null", m.dest);
        break;
    }
  }
  const env: Record<string, string> = { HOME: HOME_INSIDE, TMPDIR: TMP_INSIDE };
  if (spec.network.mode === "proxy") {
    args.push("--dir", "/run/byteseek", "--bind", spec.network.socketPath, PROXY_SOCKET_INSIDE);
    const url = `http://127.0.0.1:${PROXY_PORT}`;
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"])
      env[name] = url;
    env.NO_PROXY = "";
    env.no_proxy = "";
  }
  // the root folder bubblewrap made is read-only: nothing grows it (a memory hog by files)
  args.push("--remount-ro", "/", "--chdir", spec.cwd, "--");
  // with a pids cgroup, the shell that puts bubblewrap in it sets the other limits itself (below):
  // one exec less per command. Without one, prlimit sets them all, RLIMIT_NPROC included.
  const { cgroup } = spec;
  const limited = cgroup?.pids
    ? [...command]
    : [
        "prlimit",
        `--cpu=${limits.cpuSeconds}`,
        `--as=${limits.memoryBytes}`,
        `--nproc=${limits.processes}`,
        `--nofile=${limits.openFiles}`,
        `--fsize=${limits.fileSizeBytes}`,
        "--",
        ...command,
      ];
  if (spec.network.mode === "proxy") {
    // the bridge from the sandbox's own loopback to the proxy's socket, listening before the command starts
    const bridge = `socat TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${PROXY_SOCKET_INSIDE} & i=0; until grep -q ':${PROXY_PORT.toString(16).toUpperCase().padStart(4, "0")} 00000000:0000 0A' /proc/net/tcp || [ $i -ge 500 ]; do i=$((i+1)); sleep 0.01; done; exec "$@"`;
    args.push("/bin/sh", "-c", bridge, "sh", ...limited);
  } else args.push(...limited);
  const [first, ...more] = cgroup?.procs ?? [];
  if (first !== undefined) {
    // the shell joins its cgroups ($0, $1…: one per hierarchy) and execs bubblewrap, so every
    // process of the command is in them from the start
    const steps = [`echo $$ > "$0"`, ...more.map((_, i) => `echo $$ > "\${${i + 1}}"`)];
    if (spec.oomFirst) steps.push(OOM_FIRST);
    if (more.length > 0) steps.push(`shift ${more.length}`);
    // POSIX sh's ulimit: -t seconds, -v KiB, -n files, -f 512-byte blocks; inherited by bubblewrap
    // and everything inside (processes are held by the pids cgroup, which binds root too)
    if (cgroup?.pids)
      steps.push(
        `ulimit -t ${limits.cpuSeconds}`,
        `ulimit -v ${Math.floor(limits.memoryBytes / 1024)}`,
        `ulimit -n ${limits.openFiles}`,
        `ulimit -f ${Math.floor(limits.fileSizeBytes / 512)}`,
      );
    return {
      file: "/bin/sh",
      args: ["-c", `${steps.join(" && ")} && exec "$@"`, first, ...more, spec.bwrap, ...args],
      env,
    };
  }
  if (spec.oomFirst)
    return { file: "/bin/sh", args: ["-c", `${OOM_FIRST}; exec "$@"`, "sh", spec.bwrap, ...args], env };
  return { file: spec.bwrap, args, env };
}
