/**
 * What a person reviewing tools needs to know about one, derived once for the tools list (its
 * filters) and a tool's page: what kind of tool it is, who owns it, and the states that ask for a
 * decision (needs approval, held for review, not accepted, switched off, blocked, invalid).
 */
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

export function toolFacts(entry: ToolEntry): ToolFacts {
  const t = entry.tool;
  const owner = t?.owner !== undefined ? { person: false as const, vid: t.owner } : { person: true as const };
  if (!t) return { kind: "invalid", owner, states: ["invalid"] };
  const kind: ToolKindName =
    t.impl === "builtin" && t.ref !== undefined && t.ref !== t.name ? "alias" : t.impl;
  const states: ToolState[] = [t.enabled ? "enabled" : "disabled"];
  const approval = t.approval === undefined ? undefined : approvalReason(t.name, t.approval);
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
 * Why calls of a tool wait for a person, in words: the server names the rule as the gate decides it
 * (the declaration's `confirm`, one inherited from what an alias runs, the policy's `confirm`; a
 * standing approval lifts it), so the page never guesses.
 */
function approvalReason(name: string, rule: string): string {
  if (rule === "declaration.confirm") return "its declaration says confirm: true";
  const inherited = /^(.+)\.confirm \(inherited\)$/.exec(rule);
  if (inherited) return `it runs ${inherited[1]}, whose declaration says confirm: true`;
  const listed = /^confirm\[\d+\] \((.+)\)$/.exec(rule);
  if (listed) return `the policy's confirm lists ${listed[1]}${listed[1] === name ? "" : ", which it runs"}`;
  return `rule: ${rule}`;
}
