import { isToolError, type ToolErrorCode, type ToolKind } from "../errors.js";
import type { ToolOutput, ToolResult } from "../types.js";

/** A tool's output as the result the model sees. */
export function success(output: ToolOutput): ToolResult {
  const result: ToolResult = { kind: "ok", isError: false, text: output.text, details: output.details ?? {} };
  if (output.terminate) result.terminate = true;
  return result;
}

export function failure(
  kind: ToolKind,
  code: ToolErrorCode,
  text: string,
  details: Record<string, unknown>,
): ToolResult {
  return { kind, isError: true, text, details: { code, ...details } };
}

/** Any throw becomes a result: a ToolError keeps its kind and code, anything else is `runtime`. */
export function fromError(err: unknown, name: string): ToolResult {
  if (isToolError(err)) {
    const kind = err.kind === "ok" || err.kind === "truncated" ? "runtime" : err.kind;
    return failure(kind, err.code, err.message, err.details);
  }
  const message = err instanceof Error ? err.message : String(err);
  return failure("runtime", "failed", `${name} failed: ${message}`, {});
}
