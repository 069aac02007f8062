/**
 * The tree's error catalogue. Every failure of a tree operation is a `TreeError` with one of
 * these codes; the HTTP layer maps codes to statuses in one place (`server/errors.ts`).
 */
export const TREE_ERROR_CODES = [
  "TREE_INVALID_KEY",
  "TREE_INVALID_VALUE",
  "TREE_VALUE_TOO_LARGE",
  "TREE_NOT_FOUND",
  "TREE_NOT_A_DIRECTORY",
  "TREE_NOT_EMPTY",
  "TREE_READ_ONLY",
  "TREE_VERSION_MISMATCH",
  "TREE_EXISTS",
  "TREE_TXN_INVALID",
  "TREE_COMPACTED",
  "TREE_IMPORT_FAILED",
  "TREE_LOCKED",
  "TREE_CLOSED",
  "TREE_UNAVAILABLE",
  /**
   * A byteseek server (KVSPACE=http://…, or a held folder's socket) took the connection but did not
   * answer within the client's bound (BYTESEEK_CLIENT_TIMEOUT): stuck, or far too busy.
   */
  "TREE_TIMEOUT",
  "TREE_INVALID_OPTION",
  /** A move or copy naming a system entry (`‥…`), byteseek's bookkeeping. */
  "TREE_HIDDEN",
  /** A move or copy of more keys than one revision holds (MAX_TRANSFER_KEYS). */
  "TREE_TOO_LARGE",
  /**
   * A number that cannot be kept exactly (tree/exact.ts): an integer out of int64's range, or beyond
   * 2^53 inside json. The HTTP API answers it as HTTP_INEXACT_NUMBER.
   */
  "TREE_INEXACT_NUMBER",
] as const;
export type TreeErrorCode = (typeof TREE_ERROR_CODES)[number];

/**
 * An error of one part's catalogue: a code its callers map (HTTP to a status), a message saying
 * what to do, and extra facts a caller may show. Each part's error class extends it with its own
 * codes and name; it sits here, on the lowest floor, so that every part can.
 */
export class CodedError<C extends string> extends Error {
  readonly code: C;
  /** Extra facts a caller may show (JSON-serialisable). */
  readonly details: Record<string, unknown>;

  constructor(code: C, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.details = details;
  }
}

/** A tree operation's failure; its details: the current node on a CAS failure, the oldest revision… */
export class TreeError extends CodedError<TreeErrorCode> {
  override readonly name = "TreeError";
}

export function isTreeError(err: unknown, code?: TreeErrorCode): err is TreeError {
  return err instanceof TreeError && (code === undefined || err.code === code);
}
