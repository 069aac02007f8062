/**
 * The environment of every process a tool call starts (shell.run, shell impls, and later MCP
 * servers): never the server's own, which holds its token and provider keys.
 */

/** Names every command gets from the server's environment when they are set there. */
export const ENV_ALLOW = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "TERM",
  "TZ",
  "TMPDIR",
] as const;

/** Locale variables (`LC_ALL`, `LC_CTYPE`, …) pass too. */
const LOCALE = /^LC_[A-Z_]+$/;

/** The variable that marks every process a call starts, so the call can end them all. */
export const CALL_MARK = "BYTESEEK_CALL";

/** A fallback when the server's environment has no PATH (commands would find nothing). */
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

export interface CommandEnvOptions {
  /** The server's environment as read at start (secrets included: only allowed names are taken). */
  source: Readonly<Record<string, string | undefined>>;
  /** Names a person listed in the policy's `passEnv`, passed through when set in `source`. */
  passEnv?: readonly string[];
  /** The declaration's own variables (placeholders already filled): they win over the rest. */
  declared?: Readonly<Record<string, string>>;
  /** The call's mark (BYTESEEK_CALL); set last, so nothing overrides it. */
  mark: string;
  /** A temp folder of the call's own, given as TMPDIR. */
  tmpdir?: string;
}

/**
 * Builds a command's environment: the allow-list (PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*,
 * TERM, TZ, TMPDIR), then the policy's passEnv names, then the declaration's env, then TMPDIR (the
 * call's own folder) and the call's mark. Nothing else of the server's environment is passed.
 */
export function buildCommandEnv(options: CommandEnvOptions): Record<string, string> {
  const { source } = options;
  const env: Record<string, string> = {};
  const allowed = new Set<string>([...ENV_ALLOW, ...(options.passEnv ?? [])]);
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (allowed.has(name) || LOCALE.test(name)) env[name] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  for (const [name, value] of Object.entries(options.declared ?? {})) env[name] = value;
  if (options.tmpdir) env.TMPDIR = options.tmpdir;
  env[CALL_MARK] = options.mark;
  return env;
}
