/**
 * What a person reviewing tools needs to know about one, derived once for the tools list (its
 * filters) and a tool's page: what kind of tool it is, who owns it, and the states that ask for a
 * decision (needs approval, held for review, not accepted, switched off, blocked, invalid).
 */
import type { JsonValue } from "./api.js";
import type { ToolEntry } from "./tool-parts.js";

/** How a tool runs; `alias` is a builtin under another name than the function it runs. */
export const TOOL_KINDS = ["builtin", "alias", "shell", "http", "llm", "mcp"] as const;
export type ToolKindName = (typeof TOOL_KINDS)[number];

/** The states a filter picks; a tool has several (enabled and needs approval, say). */
export const TOOL_STATES = [
  "enabled",
  "disabled",
  "needs approval",
  "held for review",
  "not accepted",
  "blocked",
  "invalid",
] as const;
export type ToolState = (typeof TOOL_STATES)[number];

/** The parts of the policy these facts read (the page reads the policy as a person may). */
export interface PolicyView {
  confirm: string[];
  approved: string[];
}

export const NO_POLICY: PolicyView = { confirm: [], approved: [] };

/** The policy's `confirm` and `approved` lists from its stored value, whatever else it holds. */
export function policyView(value: JsonValue | undefined): PolicyView {
  const v = value && typeof value === "object" && !Array.isArray(value) ? value : {};
  const strings = (x: JsonValue | undefined) =>
    Array.isArray(x) ? x.filter((s): s is string => typeof s === "string") : [];
  return { confirm: strings(v.confirm), approved: strings(v.approved) };
}

export interface ToolFacts {
  kind: ToolKindName | "invalid";
  /** `person`, or the run that last wrote the declaration. */
  owner: { person: true } | { person: false; vid: string };
  /** An mcp tool's upstream server. */
  server?: string;
  states: ToolState[];
  /** Why every call needs a person's approval, when one does (one line). */
  approval?: string;
}

export function toolFacts(entry: ToolEntry, policy: PolicyView): ToolFacts {
  const t = entry.tool;
  const owner = t?.owner !== undefined ? { person: false as const, vid: t.owner } : { person: true as const };
  if (!t) return { kind: "invalid", owner, states: ["invalid"] };
  const kind: ToolKindName =
    t.impl === "builtin" && t.ref !== undefined && t.ref !== t.name ? "alias" : t.impl;
  const states: ToolState[] = [t.enabled ? "enabled" : "disabled"];
  const approval = approvalReason(t.name, t.confirm, t.ref, policy);
  if (approval) states.push("needs approval");
  if (t.held) states.push("held for review");
  if (t.hash !== undefined && t.accepted !== true) states.push("not accepted");
  if (t.blocked !== undefined && !t.held && !(t.hash !== undefined && t.accepted !== true))
    states.push("blocked");
  return {
    kind,
    owner,
    ...(t.server === undefined ? {} : { server: t.server }),
    states,
    ...(approval ? { approval } : {}),
  };
}

/**
 * Why calls of a tool wait for a person (TOOLS.md "Approvals"): its declaration's `confirm`, or the
 * policy's `confirm` naming it or the built-in it runs — unless the policy approved it for good
 * (by name; an approval pinned to a hash covers one version and is not counted here).
 */
function approvalReason(
  name: string,
  confirm: boolean,
  ref: string | undefined,
  policy: PolicyView,
): string | undefined {
  if (policy.approved.includes(name)) return undefined;
  if (confirm) return "its declaration says confirm: true";
  if (policy.confirm.includes(name)) return `the policy's confirm lists ${name}`;
  if (ref !== undefined && policy.confirm.includes(ref))
    return `the policy's confirm lists ${ref}, which it runs`;
  return undefined;
}
