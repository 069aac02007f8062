import { suggest, ToolError } from "../errors.js";

/** The errno of a Node fs error, if it has one. */
export function errnoOf(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err && typeof err.code === "string")
    return err.code;
  return undefined;
}

/** Turns a Node fs error about `display` into a ToolError with a message written for the model. */
export function fsError(err: unknown, display: string): ToolError {
  if (err instanceof ToolError) return err;
  if (err instanceof Error && err.name === "AbortError") {
    return new ToolError("aborted", `The operation on ${display} was stopped (the call was aborted).`, {
      details: { path: display },
      cause: err,
    });
  }
  const errno = errnoOf(err);
  const details = { path: display, errno };
  switch (errno) {
    case "ENOENT":
      return new ToolError("file_not_found", `${display} does not exist.`, {
        details,
        cause: err,
        explain: (where) =>
          `${display} does not exist in the workspace ${where.workspace} (paths are relative to it).` +
          suggest(where, ["edit.ls", "edit.glob"], "Check the path with {tools}."),
      });
    case "EISDIR":
      return new ToolError("is_directory", `${display} is a directory, not a file. Name a file inside it.`, {
        details,
        cause: err,
      });
    case "ENOTDIR":
    case "EEXIST":
      return new ToolError(
        "not_a_directory",
        `A part of ${display} is a file where a directory is needed. Choose another path.`,
        { details, cause: err },
      );
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return new ToolError(
        "permission_denied",
        `Permission denied for ${display}. It cannot be changed by this tool; leave it or ask the user.`,
        { details, cause: err },
      );
    case "ELOOP":
    case "ENAMETOOLONG":
      return new ToolError("invalid_path", `${display} cannot be resolved (${errno}). Use a plainer path.`, {
        details,
        cause: err,
      });
    default:
      return new ToolError(
        "failed",
        `File operation on ${display} failed: ${err instanceof Error ? err.message : String(err)}`,
        { details, cause: err },
      );
  }
}
