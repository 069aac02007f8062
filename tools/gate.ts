import { realpath } from "node:fs/promises";
import path from "node:path";
import type { ToolDeclaration } from "./declaration.js";
import { httpUrl } from "./impl/http.js";
import { hostAllowed, type Policy } from "./policy.js";

/** Argument names that hold file paths in the file tools (`edit.*`). */
const PATH_ARGS = ["path", "from", "to"] as const;

/** Why the policy refuses a call, or undefined when it lets it through. */
export interface GateRefusal {
  code: "denied" | "needs_approval" | "outside_root";
  reason: string;
}

export interface GateInput {
  name: string;
  declaration: ToolDeclaration;
  args: Record<string, unknown>;
  agentWritten: boolean;
  approved: boolean;
  policy: Policy;
  /** Real path of the runtime's workspace. */
  workspace: string;
}

/**
 * The policy's checks, in order: impl kind of an agent-written declaration, confirmation, http
 * hosts, tree keys the tree tools may not touch, and the roots and denied prefixes of the file
 * tools' paths (decided on real paths, the nearest existing parent for a new file).
 */
export async function checkPolicy(input: GateInput): Promise<GateRefusal | undefined> {
  const { declaration: decl, policy, args, name } = input;
  const impl = decl.impl;
  if (input.agentWritten && !policy.agentImpls.includes(impl.kind))
    return {
      code: "denied",
      reason: `${name} was declared by an agent with an impl of kind "${impl.kind}", which the policy does not allow for agent-written tools (allowed: ${policy.agentImpls.join(", ") || "none"}); use an existing tool instead`,
    };
  const ref = impl.kind === "builtin" ? impl.ref : undefined;
  const needsApproval =
    decl.confirm || policy.confirm.includes(name) || (ref !== undefined && policy.confirm.includes(ref));
  if (needsApproval && !input.approved)
    return {
      code: "needs_approval",
      reason: `${name} needs the user's approval: ask the user, and call it again once they approve`,
    };
  if (impl.kind === "http") {
    let url: URL;
    try {
      url = httpUrl(impl, args);
    } catch {
      return { code: "denied", reason: `${name}: the arguments do not make a valid URL` };
    }
    if (!hostAllowed(url, policy.httpHosts))
      return {
        code: "denied",
        reason: `the policy does not allow http tools to reach ${url.host} (allowed hosts: ${policy.httpHosts.join(", ") || "none"})`,
      };
  }
  if (ref?.startsWith("tree.") && typeof args.key === "string") {
    const key = args.key;
    const hit = policy.denyKeys.find((p) => key.startsWith(p) || `${key}/`.startsWith(p));
    if (hit) return { code: "denied", reason: `the policy denies the tree tools access to ${hit}` };
  }
  if (ref?.startsWith("edit.")) {
    for (const arg of PATH_ARGS) {
      const value = args[arg];
      if (typeof value !== "string" || value.includes("\u0000")) continue;
      const refusal = await checkPath(value, input.workspace, policy);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

async function checkPath(raw: string, workspace: string, policy: Policy): Promise<GateRefusal | undefined> {
  const real = await realPathOf(path.resolve(workspace, raw));
  const roots = [workspace, ...(await Promise.all(policy.workspaceRoots.map((r) => realPathOf(r))))];
  if (!roots.some((root) => inside(real, root)))
    return {
      code: "outside_root",
      reason: `${raw} is outside the workspace (${roots.join(", ")}); use a path inside it`,
    };
  for (const prefix of policy.deny) {
    const denied = await realPathOf(path.resolve(workspace, prefix));
    if (inside(real, denied)) return { code: "denied", reason: `the policy denies access to ${prefix}` };
  }
  return undefined;
}

/** Real path of `p`, or of its nearest existing parent with the rest appended. */
async function realPathOf(p: string): Promise<string> {
  const tail: string[] = [];
  let cur = p;
  for (;;) {
    try {
      return path.join(await realpath(cur), ...tail.reverse());
    } catch {
      const parent = path.dirname(cur);
      if (parent === cur) return p;
      tail.push(path.basename(cur));
      cur = parent;
    }
  }
}

function inside(p: string, root: string): boolean {
  if (p === root) return true;
  return p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}
