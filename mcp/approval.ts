/**
 * The confirm flow over MCP. A call the gate refuses with `needs_approval` is put to the person
 * through elicitation when the client can ask (2026 era: an input_required result; 2025 era: an
 * `elicitation/create` on the call's own request, worded for the host's revision: mcp/server.ts);
 * on yes the call is made again with the approval,
 * on no — or with a client that cannot ask — it answers `denied`, saying how to approve otherwise.
 *
 * `decideApproval` is the one decision point. A yes is kept in the tree like every other approval
 * (/byteseek/approval/<vid>/<n>, decided `once` by the person in the host: see `McpSource.call`).
 */
import type { InputRequiredResult } from "@modelcontextprotocol/server";
import { inputRequired, inputResponse } from "@modelcontextprotocol/server";
import { printable } from "../tools/catalogue/printable.js";
import type { HostForm } from "./host-elicit.js";

/** The key of our one embedded request in `inputRequests` / `inputResponses`. */
export const APPROVAL_KEY = "byteseek_approval";

/** What the person answered, if they were asked. */
export type ApprovalAnswer = "approved" | "declined" | "cancelled" | undefined;

export type ApprovalStep =
  | { step: "call"; approve: true }
  | { step: "ask"; result: InputRequiredResult }
  | { step: "deny"; text: string };

export interface ApprovalInput {
  name: string;
  args: unknown;
  /** What the call would run (the gate's refusal carries it: tools/call/effect.ts), who declared it, its hash. */
  effect?: string;
  owner?: string;
  hash?: string;
  /** The answer carried by this round, if any. */
  answer: ApprovalAnswer;
  /** The client declared form elicitation. */
  canAsk: boolean;
  /** Integrity-protected state naming this call, echoed back by the client with its answer. */
  requestState?: string;
}

/** What the person is told of a call that needs approval. */
export type ApprovalFacts = Pick<ApprovalInput, "name" | "args" | "effect" | "owner" | "hash">;

/** Reads the person's answer from a retried request's `inputResponses`. */
export function approvalAnswer(responses: Record<string, unknown> | undefined): ApprovalAnswer {
  const view = inputResponse(responses, APPROVAL_KEY);
  if (view.kind !== "elicit") return undefined;
  if (view.action === "decline") return "declined";
  if (view.action === "cancel") return "cancelled";
  const content = (view as { content?: Record<string, unknown> }).content;
  return content?.approve === true ? "approved" : "declined";
}

/** Decides what a call that needs approval does next. */
export function decideApproval(input: ApprovalInput): ApprovalStep {
  const { name, answer } = input;
  if (answer === "approved") return { step: "call", approve: true };
  if (answer === "declined" || answer === "cancelled")
    return {
      step: "deny",
      text: `${name} was not run: the person ${answer === "declined" ? "declined" : "dismissed"} it when asked. Do not call it again unless they ask you to. ${howToApprove(name, input.args)}`,
    };
  if (!input.canAsk)
    return {
      step: "deny",
      text: `${name} needs the person's approval, and this MCP client cannot ask them (it declared no elicitation). ${howToApprove(name, input.args)}`,
    };
  return {
    step: "ask",
    result: inputRequired({
      inputRequests: { [APPROVAL_KEY]: inputRequired.elicit({ mode: "form", ...approvalForm(input) }) },
      ...(input.requestState === undefined ? {} : { requestState: input.requestState }),
    }),
  };
}

/** The question a call that needs approval puts to the person: its message and a one-checkbox form. */
export function approvalForm(input: ApprovalFacts): HostForm {
  const { name } = input;
  return {
    message: printable(
      `byteseek: run ${name} ${preview(input.args)}?${input.effect ? ` It runs: ${input.effect}.` : ""}${input.owner ? ` Declared by ${input.owner}${input.hash ? `, sha256 ${input.hash.slice(0, 12)}` : ""}.` : ""}`,
    ),
    requestedSchema: {
      type: "object",
      properties: { approve: { type: "boolean", title: `Run ${name}`, default: false } },
      required: ["approve"],
    },
  };
}

/** What a call whose approval the host could not ask for (it refused the question, failed or timed out) answers. */
export function notAsked(name: string, args: unknown, why: string): ApprovalStep {
  return {
    step: "deny",
    text: `${name} was not run: it needs the person's approval, and this MCP client could not ask them (${printable(why).slice(0, 300)}). ${howToApprove(name, args)}`,
  };
}

function howToApprove(name: string, args: unknown): string {
  const json = printable(JSON.stringify(args ?? {}));
  const shown = json.length > 200 ? "'<args>'" : `'${json.replaceAll("'", "'\\''")}'`;
  return `To run it, the person approves it outside this chat: kvspace call ${name} ${shown} --approve (or POST /v1/tools/${name}/call with "approve": true).`;
}

function preview(args: unknown): string {
  const json = JSON.stringify(args ?? {});
  return json.length > 300 ? `${json.slice(0, 299)}…` : json;
}
