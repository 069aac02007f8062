import { createTwoFilesPatch } from "diff";
import { isTreeError, type TreeErrorCode } from "../../tree/errors.js";
import { isSystemName } from "../../tree/path.js";
import { formatValue, type TreeValue, valueToJson } from "../../tree/value.js";
import type { ProposedChange } from "../approvals.js";
import { ToolError, type ToolErrorCode, type ToolKind } from "../errors.js";
import { MODEL_SETTINGS_PREFIX, modelSettingsKey, POLICY_KEY } from "../policy.js";
import type { ToolContext } from "../types.js";

/**
 * What only the runtime (and people) write: runs' sessions, call records, usage and state, and the
 * approvals people decide. A tool writing there could forge another run's history or its own approval.
 */
export const RUNTIME_DIRS = [
  "/byteseek/session/",
  "/byteseek/tool/",
  "/byteseek/usage/",
  "/byteseek/approval/",
  "/vthread/",
] as const;

/** Is `key` (a value or a directory) in a tree listing a tool may not see: the policy, the model's settings, or under a denied prefix? */
export function hiddenKey(key: string, denyKeys: readonly string[] = []): boolean {
  if (key === POLICY_KEY || key.startsWith(`${POLICY_KEY}/`) || modelSettingsKey(key)) return true;
  return denyKeys.some((p) => key.startsWith(p) || `${key}/`.startsWith(p));
}

/**
 * The tree tools never touch the policy nor system entries (`‥…`, byteseek's own bookkeeping), and
 * never write what the runtime keeps (RUNTIME_DIRS); read-only keys are refused by the tree itself
 * (they are never forced).
 */
export function guardKey(key: string, action: "read" | "write" | "delete"): void {
  const owned = RUNTIME_DIRS.find((d) => key.startsWith(d) || `${key}/` === d);
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

/** A tool declaration (`/byteseek/tools/<name>`) or a prompt: what a person's change to needs their yes. */
function personGuarded(key: string): boolean {
  const tools = "/byteseek/tools/";
  if (key.startsWith(tools)) return !key.slice(tools.length).includes("/");
  return key.startsWith("/byteseek/prompt/");
}

function textOf(v: TreeValue): string {
  return v.kind === "json" ? `${JSON.stringify(v.value, null, 2)}\n` : `${formatValue(v)}\n`;
}

/**
 * A declaration or prompt a person wrote (no owner run: written over HTTP, the CLI, imported or
 * seeded) is not changed by a tool on its own: unless this call is a person's (approved), the tool
 * answers `needs_approval` carrying the change and its diff, which the runtime turns into an
 * approval request when a person can be asked. What runs wrote, they may change.
 */
export async function guardPersonWritten(
  ctx: ToolContext,
  key: string,
  action: "set" | "del",
  next?: TreeValue,
): Promise<void> {
  if (ctx.approved || !personGuarded(key)) return;
  const node = await ctx.tree.get(key).catch(fromTreeError);
  if (!node || node.kind === "index" || node.vid !== undefined) return;
  const diff = createTwoFilesPatch(
    key,
    key,
    textOf(node.value),
    next ? textOf(next) : "",
    "as written",
    action === "del" ? "deleted" : "proposed",
  );
  const change: ProposedChange = {
    key,
    action,
    ifVersion: node.version,
    diff,
    ...(next ? { value: { kind: next.kind, value: valueToJson(next) } } : {}),
  };
  throw new ToolError(
    "needs_approval",
    `${key} was written by a person, so ${action === "del" ? "deleting" : "changing"} it needs their approval, and none could be asked for this call; ask the user to make the change, or declare a new tool under another name instead.`,
    { details: { key, change } },
  );
}
