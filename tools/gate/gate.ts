import { realpath } from "node:fs/promises";
import path from "node:path";
import { heldFromOthers, notAcceptedReason } from "../catalogue/agent-tools.js";
import type { ToolDeclaration } from "../catalogue/declaration.js";
import { httpUrl } from "../impl/http.js";
import type { UpstreamVerdict } from "../mcp/allowed.js";
import { matchName, targetOfUrl } from "../net/host-rules.js";
import { parseStanding } from "./approvals.js";
import { powersNeeded } from "./needs.js";
import { MODEL_SETTINGS_PREFIX, modelSettingsKey, netHosts, POLICY_KEY, type Policy } from "./policy.js";
import { type Grant, grantOf, type Need, POWER_MEANING, type Power } from "./powers.js";

/** Argument names that hold file paths in the file tools (`edit.*`). */
const PATH_ARGS = ["path", "from", "to"] as const;

/** Why the policy refuses a call: the code, a reason written for the model, and the rule. */
export interface GateRefusal {
  code: "denied" | "needs_approval" | "outside_root" | "held_for_review" | "mcp_not_allowed";
  reason: string;
  /** The policy rule (or declaration field) that refused, e.g. `grants.default.exec`, `deny[0] (secrets/)`. */
  rule: string;
  /** The power the call lacked, when that was why. */
  power?: Power;
}

/** The gate's answer: allowed by a rule (the run's grant), or refused. */
export type GateVerdict = { allowed: true; rule: string } | ({ allowed: false } & GateRefusal);

export interface GateInput {
  name: string;
  declaration: ToolDeclaration;
  args: Record<string, unknown>;
  /** The run making the call: its grant is the one that applies. */
  vid: string;
  agentWritten: boolean;
  approved: boolean;
  policy: Policy;
  /** Real path of the runtime's workspace. */
  workspace: string;
  /** Real paths no file tool may touch whatever the policy says (the embedded store). */
  hidden?: readonly string[];
  /** The powers a built-in needs, by ref. */
  builtinPowers: (ref: string) => readonly Power[];
  /** The hash of the declaration as read for this call: a standing approval names it (approvals.ts). */
  declHash?: string;
  /** The run that wrote the declaration (absent: a person's), and the hash a person accepted of it for every run (agent-tools.ts). */
  declOwner?: string;
  agentAccepted?: (name: string) => Promise<string | undefined>;
  /** Confirmation inherited from the declaration an alias wraps: where it comes from. */
  inheritedConfirm?: string;
  /**
   * The synced declaration an `mcp` declaration of another name runs (catalogue.ts): the policy's
   * `confirm` and `approved` naming it apply to this call, as they apply to a built-in's aliases by ref.
   */
  wraps?: string;
  /** The powers an `mcp` tool's server needs (exec for a command, net to its host), from its registry entry. */
  mcpNeeds?: (server: string) => Promise<Need[]>;
  /**
   * Whether an `mcp` tool's upstream tool may be called at all: the entry's allow-list, a sync that
   * declared it, and no pin held for a person's review (tools/mcp/allowed.ts, the one place of that rule).
   */
  mcpAllowed?: (server: string, tool: string) => Promise<UpstreamVerdict>;
}

const HOW_TO_GRANT =
  "A person grants it in /byteseek/policy (kvspace get /byteseek/policy, then kvspace set /byteseek/policy 'json:{…}' ro --force)";

// Lives with the policy, so tools/mcp/sync.ts reads it without importing the gate (a cycle).
export { netHosts };

/**
 * The policy's checks, in order: the legacy impl-kind rule, a URL an http tool can make, the powers
 * the call needs against the run's grant, tree keys the policy denies (the tree tools' key, an llm
 * tool's prompt), the roots and denied prefixes of the file tools' paths (decided on real paths,
 * the nearest existing parent for a new file), and last confirmation (the declaration's, the one
 * it inherits, the policy's by name or ref; satisfied by an approval or policy.approved).
 */
export async function checkPolicy(input: GateInput): Promise<GateVerdict> {
  const { declaration: decl, policy, args, name, vid } = input;
  const impl = decl.impl;
  if (input.agentWritten && policy.agentImpls && !policy.agentImpls.includes(impl.kind))
    return refuse(
      "denied",
      "agentImpls",
      `${name} was declared by an agent with an impl of kind "${impl.kind}", which the policy's legacy agentImpls rule does not allow (allowed: ${policy.agentImpls.join(", ") || "none"}). ${HOW_TO_GRANT} by removing agentImpls (grants decide instead). Until then use an existing tool.`,
    );
  if (input.declOwner !== undefined && input.agentAccepted && policy.agentTools.share === "accepted") {
    const accepted = input.declOwner === vid ? undefined : await input.agentAccepted(name);
    if (heldFromOthers(policy.agentTools, input.declOwner, vid, input.declHash ?? "", accepted))
      return refuse(
        "held_for_review",
        "agentTools.share",
        `${name} was not run: ${notAcceptedReason(name, input.declOwner)}.`,
      );
  }
  if (impl.kind === "mcp" && input.mcpAllowed) {
    const verdict = await input.mcpAllowed(impl.server, impl.tool);
    if (!verdict.ok)
      return refuse(
        verdict.code,
        verdict.code === "held_for_review"
          ? `pin (${impl.server}/${impl.tool})`
          : `mcp allow-list (${impl.server}/${impl.tool})`,
        `${name} was not run: ${verdict.reason}`,
      );
  }
  const { grant, rule } = grantOf(policy.grants, vid);
  if (impl.kind === "http") {
    try {
      httpUrl(impl, args);
    } catch {
      return refuse("denied", "impl.url", `${name}: the arguments do not make a valid URL`);
    }
  }
  const needs =
    impl.kind === "mcp"
      ? ((await input.mcpNeeds?.(impl.server)) ?? [])
      : powersNeeded(decl, args, input.builtinPowers);
  for (const need of needs) {
    const missing = lacking(need, grant, policy);
    if (missing !== undefined)
      return {
        allowed: false,
        code: "denied",
        power: need.power,
        rule: `${rule}.${need.power}`,
        reason: `${name} needs the power "${need.power}" (${POWER_MEANING[need.power]}${missing}), which run ${vid} does not hold (rule: ${rule}.${need.power}). ${HOW_TO_GRANT}: ${grantHint(need, rule)}. Until then use another tool, or ask the user.`,
      };
  }
  const ref = impl.kind === "builtin" ? impl.ref : input.wraps;
  for (const key of keysRead(decl, args)) {
    const refusal = keyRefusal(key, policy);
    if (refusal) return refusal;
  }
  if (ref?.startsWith("edit.")) {
    for (const arg of PATH_ARGS) {
      const value = args[arg];
      if (typeof value !== "string" || value.includes("\u0000")) continue;
      const refusal = await checkPath(
        value,
        input.workspace,
        policy,
        ref === "edit.rename",
        input.hidden ?? [],
      );
      if (refusal) return { allowed: false, ...refusal };
    }
  }
  // Confirmation last: a person is asked only about a call every other rule lets through.
  const { rule: confirmRule, standing } = confirmation(policy, {
    name,
    ref,
    confirm: decl.confirm,
    inheritedConfirm: input.inheritedConfirm,
    declHash: input.declHash,
  });
  if (confirmRule !== undefined && !input.approved && standing < 0) {
    const lapsed = policy.approved.some((a) => {
      const s = parseStanding(a);
      return s.tool === name && s.hash !== undefined;
    });
    return refuse(
      "needs_approval",
      confirmRule,
      `${name} needs the user's approval (rule: ${confirmRule})${lapsed ? "; the approval for good it had was for an earlier version of its declaration, which has changed since" : ""}: ask the user, and call it again once they approve`,
    );
  }
  if (confirmRule === undefined) return { allowed: true, rule };
  const by = input.approved ? "approved" : `approved[${standing}] (${policy.approved[standing]})`;
  return { allowed: true, rule: `${rule}, ${by} (${confirmRule})` };
}

/** Why no tool may touch `key` whatever the run's grant: denyKeys, the model's settings, the policy. */
function keyRefusal(key: string, policy: Policy): GateVerdict | undefined {
  const hit = policy.denyKeys.findIndex((p) => key.startsWith(p) || `${key}/`.startsWith(p));
  if (hit >= 0) {
    const prefix = policy.denyKeys[hit] as string;
    return refuse(
      "denied",
      `denyKeys[${hit}] (${prefix})`,
      `the policy denies tools access to ${prefix} (rule: denyKeys[${hit}]); ${key} is under it`,
    );
  }
  if (modelSettingsKey(key))
    return refuse(
      "denied",
      "model settings",
      `${key} is under ${MODEL_SETTINGS_PREFIX}, the model's settings: no tool may read or change them; ask the user`,
    );
  if (key === POLICY_KEY || key.startsWith(`${POLICY_KEY}/`))
    return refuse(
      "denied",
      "policy",
      `${key} is the gate policy: no tool may read or change it; ask the user`,
    );
  return undefined;
}

/**
 * Why run `vid` may not read `key`, exactly as the gate decides a `tree.get` of it: the power `tree`
 * on the key (the run's grant), then denyKeys, the model's settings and the policy. Undefined: it
 * may. MCP resources and prompts are read under this rule (mcp/resources.ts).
 */
export function treeReadRefusal(key: string, policy: Policy, vid: string): string | undefined {
  const { grant, rule } = grantOf(policy.grants, vid);
  const need: Need = { power: "tree", key };
  if (lacking(need, grant, policy) !== undefined)
    return `run ${vid} does not hold the power "tree" on ${key} (rule: ${rule}.tree)`;
  const refusal = keyRefusal(key, policy);
  return refusal && !refusal.allowed ? refusal.reason : undefined;
}

function refuse(code: GateRefusal["code"], rule: string, reason: string): GateVerdict {
  return { allowed: false, code, rule, reason };
}

/** The tree keys a call names: the tree tools' `key`, an llm tool's prompt. */
function keysRead(decl: ToolDeclaration, args: Record<string, unknown>): string[] {
  const impl = decl.impl;
  if (impl.kind === "llm") return [impl.prompt];
  if (impl.kind === "builtin" && impl.ref.startsWith("tree.") && typeof args.key === "string")
    return [args.key];
  return [];
}

/**
 * Which rule makes calls of a tool wait for a person (the declaration's `confirm`, one inherited
 * from the declaration an alias wraps, or the policy's `confirm` naming the tool or what it runs),
 * and the index of the standing approval in the policy's `approved` that lifts it (-1: none). The
 * gate decides with it, and the catalogue shows a reviewer the same answer (catalogue.ts).
 */
export function confirmation(
  policy: Policy,
  tool: {
    name: string;
    /** The built-in it runs, or the synced declaration an mcp tool of another name runs. */
    ref: string | undefined;
    confirm: boolean;
    inheritedConfirm: string | undefined;
    /** The hash of the declaration as read: a standing approval pinned to a hash names it. */
    declHash: string | undefined;
  },
): { rule: string | undefined; standing: number } {
  const { name, ref } = tool;
  const rule = tool.confirm
    ? "declaration.confirm"
    : tool.inheritedConfirm
      ? tool.inheritedConfirm
      : confirmIndex(policy, name, ref);
  const standing = policy.approved.findIndex((a) => {
    const s = parseStanding(a);
    if (s.hash !== undefined) return s.tool === name && s.hash === tool.declHash;
    return a === name || (ref !== undefined && a === ref);
  });
  return { rule, standing };
}

function confirmIndex(policy: Policy, name: string, ref: string | undefined): string | undefined {
  const i = policy.confirm.findIndex((c) => c === name || (ref !== undefined && c === ref));
  return i < 0 ? undefined : `confirm[${i}] (${policy.confirm[i]})`;
}

/** Why `grant` does not cover `need` (a suffix for the message), or undefined when it does. */
function lacking(need: Need, grant: Grant, policy: Policy): string | undefined {
  switch (need.power) {
    case "net": {
      const verdict = matchName(targetOfUrl(need.url), netHosts(policy, grant));
      return verdict.ok ? undefined : ` to ${need.url.host}: ${verdict.reason}`;
    }
    case "tree":
      return grant.tree.some((p) => need.key.startsWith(p) || `${need.key}/`.startsWith(p))
        ? undefined
        : ` on ${need.key}`;
    default:
      return grant[need.power] ? undefined : "";
  }
}

function grantHint(need: Need, rule: string): string {
  const at = rule === "grants.default" ? "grants.default" : `the matching entry of grants.runs`;
  if (need.power === "net") return `add "${need.url.host}" to ${at}.net`;
  if (need.power === "tree") return `add a prefix of ${need.key} to ${at}.tree`;
  return `set ${at}.${need.power} to true`;
}

/** The real paths of the policy's extra roots and denied prefixes (for the file tools' context). */
export async function policyPaths(
  policy: Policy,
  workspace: string,
): Promise<{ roots: string[]; deny: string[] }> {
  const [roots, deny] = await Promise.all([
    Promise.all(policy.workspaceRoots.map((r) => realPathOf(r))),
    Promise.all(policy.deny.map((d) => realPathOf(path.resolve(workspace, d)))),
  ]);
  return { roots, deny };
}

/**
 * A path inside the roots and outside every denied prefix; with `moves` (rename), also no denied path
 * inside it, so moving a folder never carries a denied file to a path the rule does not name.
 */
async function checkPath(
  raw: string,
  workspace: string,
  policy: Policy,
  moves: boolean,
  hidden: readonly string[],
): Promise<GateRefusal | undefined> {
  const real = await realPathOf(path.resolve(workspace, raw));
  const roots = [workspace, ...(await Promise.all(policy.workspaceRoots.map((r) => realPathOf(r))))];
  if (!roots.some((root) => inside(real, root)))
    return {
      code: "outside_root",
      rule: "workspaceRoots",
      reason: `${raw} is outside the workspace (${roots.join(", ")}); use a path inside it`,
    };
  for (const store of hidden)
    if (inside(real, store) || (moves && inside(store, real)))
      return {
        code: "denied",
        rule: "store",
        reason: `${raw} is ${inside(real, store) ? "inside" : "a folder holding"} byteseek's own store (${store}): no tool may touch it`,
      };
  for (const [i, prefix] of policy.deny.entries()) {
    const denied = await realPathOf(path.resolve(workspace, prefix));
    if (inside(real, denied))
      return {
        code: "denied",
        rule: `deny[${i}] (${prefix})`,
        reason: `the policy denies access to ${prefix} (rule: deny[${i}])`,
      };
    if (moves && inside(denied, real))
      return {
        code: "denied",
        rule: `deny[${i}] (${prefix})`,
        reason: `${raw} holds ${prefix}, which the policy denies (rule: deny[${i}]): it cannot be moved`,
      };
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
