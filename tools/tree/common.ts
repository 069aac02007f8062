import { isTreeError, type TreeErrorCode } from "../../tree/errors.js";
import { isSystemName } from "../../tree/path.js";
import { ToolError, type ToolErrorCode, type ToolKind } from "../errors.js";
import { runtimeArea } from "../gate/ownership.js";
import { MODEL_SETTINGS_PREFIX, modelSettingsKey, POLICY_KEY } from "../gate/policy.js";

/** Is `key` (a value or a directory) in a tree listing a tool may not see: the policy, the model's settings, or under a denied prefix? */
export function hiddenKey(key: string, denyKeys: readonly string[] = []): boolean {
  if (key === POLICY_KEY || key.startsWith(`${POLICY_KEY}/`) || modelSettingsKey(key)) return true;
  return denyKeys.some((p) => key.startsWith(p) || `${key}/`.startsWith(p));
}

/**
 * The tree tools never touch the policy nor system entries (`‥…`, byteseek's own bookkeeping), and
 * never write what the runtime keeps (RUNTIME_DIRS, tools/gate/ownership.ts); read-only keys are refused by the tree itself
 * (they are never forced).
 */
export function guardKey(key: string, action: "read" | "write" | "delete"): void {
  const owned = runtimeArea(key);
  if (action !== "read" && owned)
    throw new ToolError(
      "denied",
      `${key} is under ${owned}, which only byteseek's runtime (or a person) writes: tools may not ${action} it`,
      { details: { key, rule: "runtime" } },
    );
  if (key === POLICY_KEY || key.startsWith(`${POLICY_KEY}/`))
    throw new ToolError(
      "denied",
      `${key} is the gate policy: tools may not ${action} it; ask the user to change it`,
      { details: { key } },
    );
  if (modelSettingsKey(key))
    throw new ToolError(
      "denied",
      `${key} is under ${MODEL_SETTINGS_PREFIX}, the model's settings: tools may not ${action} them; ask the user to change them`,
      { details: { key, rule: "model settings" } },
    );
  if (action !== "read" && key.split("/").some((s) => isSystemName(s)))
    throw new ToolError("denied", `${key} is a system entry kept by byteseek: tools may not ${action} it`, {
      details: { key },
    });
}

const TREE_CODES: Partial<Record<TreeErrorCode, [ToolErrorCode, ToolKind]>> = {
  TREE_INVALID_KEY: ["invalid_args", "arg"],
  TREE_INVALID_VALUE: ["invalid_args", "arg"],
  TREE_VALUE_TOO_LARGE: ["invalid_args", "arg"],
  TREE_READ_ONLY: ["read_only", "denied"],
  TREE_NOT_FOUND: ["not_found", "runtime"],
  TREE_NOT_A_DIRECTORY: ["not_a_directory", "runtime"],
  TREE_VERSION_MISMATCH: ["version_mismatch", "runtime"],
  TREE_EXISTS: ["already_exists", "runtime"],
};

const HINTS: Partial<Record<TreeErrorCode, string>> = {
  TREE_READ_ONLY: "read-only keys belong to the user or to byteseek; leave it, or ask the user",
  TREE_VERSION_MISMATCH: "someone wrote it meanwhile: tree.get it again, then retry with its current version",
  TREE_INVALID_KEY: "keys are absolute /-paths without '//', '.' or '..'; a directory ends with '/'",
};

/** A TreeError as a ToolError the model can act on; anything else is rethrown. */
export function fromTreeError(err: unknown): never {
  if (!isTreeError(err)) throw err;
  const [code, kind] = TREE_CODES[err.code] ?? (["failed", "runtime"] as const);
  const hint = HINTS[err.code];
  throw new ToolError(code, hint ? `${err.message} (${hint})` : err.message, {
    kind,
    details: { treeCode: err.code, ...err.details },
    cause: err,
  });
}
