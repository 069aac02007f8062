/**
 * The CLI's error catalogue. A `CliError` is printed as its message (never a stack) and ends the
 * process with `exitCode`: 2 for usage errors, 1 for everything else.
 */
export type CliErrorCode =
  | "CLI_USAGE"
  | "CLI_UNKNOWN_SUBCOMMAND"
  | "CLI_STORE_LOCKED"
  | "CLI_STORE_UNSUPPORTED"
  | "CLI_STORE_UNAVAILABLE"
  | "CLI_MCP_HOLDER_GONE"
  | "CLI_MCP_REFUSED"
  | "CLI_INPUT"
  /** A destructive command with no terminal to ask on and no --yes, or a person said no. */
  | "CLI_NOT_CONFIRMED"
  | "CLI_INTERRUPTED";

export class CliError extends Error {
  override readonly name = "CliError";
  readonly code: CliErrorCode;
  readonly exitCode: number;

  constructor(code: CliErrorCode, message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.exitCode = options.exitCode ?? (code === "CLI_USAGE" || code === "CLI_UNKNOWN_SUBCOMMAND" ? 2 : 1);
  }
}

/** A usage error: printed as `[what is wrong]` then `usage: kvspace <usage>`, exit code 2. */
export function usageError(usage: string, problem?: string): CliError {
  const command = usage.split(" ")[0]?.split("|")[0];
  return new CliError(
    "CLI_USAGE",
    `${problem === undefined ? "" : `kvspace ${command}: ${problem}\n`}usage: kvspace ${usage}`,
  );
}

export function isCliError(err: unknown, code?: CliErrorCode): err is CliError {
  return err instanceof CliError && (code === undefined || err.code === code);
}
