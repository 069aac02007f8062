import { z } from "zod";

/**
 * The policy's sandbox settings: whether commands run in the sandbox, the resource limits each
 * sandboxed command gets, and the credential paths hidden from it even inside a bound root.
 */

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Resource limits of one sandboxed command (and every process it starts). */
export const SandboxLimits = z
  .object({
    cpuSeconds: z
      .number()
      .int()
      .positive()
      .default(3600)
      .describe("CPU seconds each process may use (RLIMIT_CPU); past it the kernel kills it"),
    memoryBytes: z
      .number()
      .int()
      .min(64 * MiB)
      // 16 GiB, not 8: Node's fetch reserves ~10 GiB of address space for undici's WebAssembly
      // parser, so under 8 GiB every Node program that fetches (npx MCP servers) dies at its first
      // request. Address space is not memory: what a command really holds is bounded by the machine.
      .default(16 * GiB)
      .describe(
        "Address space of each process (RLIMIT_AS); an allocation past it fails. It bounds reservations, not memory held: residentBytes caps that",
      ),
    residentBytes: z
      .number()
      .int()
      .min(16 * MiB)
      // 4 GiB: a large build (tsc, webpack, a linker) fits, and a single command cannot push a
      // machine of 8 GiB or more into the OOM killer, which would take the server with it
      .default(4 * GiB)
      .describe(
        "Memory the command's processes hold together, swap included (a memory cgroup when the server can make one); past it the kernel kills the command",
      ),
    totalResidentBytes: z
      .number()
      .int()
      .min(16 * MiB)
      // no fixed default: what protects a host depends on the host (cgroup.ts defaultTotalBytes)
      .optional()
      .describe(
        "Memory all sandboxed commands of one byteseek process hold together, swap included (every run's commands and stdio MCP servers: a memory cgroup above theirs); past it the kernel kills one of them. Absent: half the memory the server may use (the machine's, or its own cgroup's limit when lower)",
      ),
    processes: z
      .number()
      .int()
      .min(8)
      .default(512)
      .describe(
        "Processes a command may have at once (a pids cgroup when the server can make one, and RLIMIT_NPROC)",
      ),
    openFiles: z.number().int().min(16).default(1024).describe("Open files per process (RLIMIT_NOFILE)"),
    fileSizeBytes: z
      .number()
      .int()
      .positive()
      .default(GiB)
      .describe("Largest file a process may write (RLIMIT_FSIZE)"),
    tmpBytes: z
      .number()
      .int()
      .min(MiB)
      .default(256 * MiB)
      .describe("Size of the private /tmp each command gets (memory-backed)"),
  })
  .strict();
export type SandboxLimits = z.infer<typeof SandboxLimits>;

/** Where users keep credentials: hidden from every command even when a bound root holds them. */
export const DEFAULT_CREDENTIAL_PATHS = [
  "~/.ssh",
  "~/.aws",
  "~/.azure",
  "~/.config/gcloud",
  "~/.config/gh",
  "~/.docker",
  "~/.kube",
  "~/.gnupg",
  "~/.netrc",
  "~/.npmrc",
  "~/.pypirc",
  "~/.git-credentials",
  "~/.cargo/credentials",
  "~/.cargo/credentials.toml",
] as const;

export const SandboxMode = z
  .enum(["on", "off"])
  .describe(
    'Run every command in the kernel sandbox ("on", the default), or as the server\'s own user with all its rights ("off": an explicit, warned choice)',
  );
export type SandboxMode = z.infer<typeof SandboxMode>;

/** What `kvspace policy`, `byteseek serve`'s start line and the web page say when the policy turns the sandbox off. */
export const SANDBOX_OFF_WARNING =
  'warning: the policy turns the sandbox off ("sandbox": "off"): commands run as the server\'s own user, with its files, network and processes; remove the setting from /byteseek/policy to sandbox them again';
