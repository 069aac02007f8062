/**
 * What an upstream MCP server may ask during a call, beside its answer: a person (an elicitation)
 * or the model (a sampling request). A leaf module: tools/types.ts names these shapes in the tool
 * context, and the approvals and the llm impl build on them, so none of them imports the others.
 */
import { z } from "zod";

/** The content of an answer to an upstream's form: flat, of the primitive values MCP elicitation allows. */
export const ElicitContent = z.record(
  z.string().max(200),
  z.union([z.string().max(10_000), z.number(), z.boolean(), z.array(z.string().max(1000)).max(100)]),
);
export type ElicitContent = z.infer<typeof ElicitContent>;

/** What an upstream MCP server asked a person during a call (its `elicitation/create`). */
export interface ElicitationAsked {
  /** The registered server that asks. */
  server: string;
  /** Its question, as it wrote it (shown neutralised). */
  message: string;
  /** The JSON Schema of the form it wants filled (a flat object of primitive fields). */
  schema: Record<string, unknown>;
}

/** How a person answered an upstream's question: MCP's three actions. */
export type ElicitAction = "accept" | "decline" | "cancel";

/** What the person answered in the caller's host: MCP's action, and the form's content on accept. */
export interface HostAnswer {
  action: ElicitAction;
  /** Checked against the upstream's schema before it goes anywhere (a misfit is refused). */
  content?: unknown;
}

/**
 * A caller that can put an upstream's question to its person itself (an MCP host, through its own
 * elicitation): the question still waits as an approval entry that any channel may decide, and the
 * host's answer decides it as `by`, via `via` (the MCP elicitation of which session).
 */
export interface HostAsker {
  by: string;
  via: string;
  /**
   * Puts `question` to the host's person; resolves with their answer, rejects when the host cannot
   * ask. `signal` aborts once the entry is decided elsewhere, times out, or the call ends.
   */
  ask(question: ElicitationAsked, options: HostAskOptions): Promise<HostAnswer>;
}

export interface HostAskOptions {
  /** The approval entry the question waits at. */
  approval: string;
  signal: AbortSignal;
  /** How long the question may wait at most (the policy's approvalTimeoutMs). */
  timeoutMs: number;
  /** Why the host's previous answer was refused (it did not fit the form): said when asking again. */
  refused?: string;
}

/** What an upstream's `sampling/createMessage` asks the model, reduced to what every provider takes. */
export interface SampleRequest {
  system?: string;
  messages: Array<{ role: "user" | "assistant"; text: string }>;
  maxTokens: number;
}

/** The model's answer to a sampling request. */
export interface SampleReply {
  text: string;
  /** The model that answered. */
  model: string;
  /** `maxTokens` when the reply hit the limit. */
  stop: "endTurn" | "maxTokens";
  /** The tokens it took, as the provider reported them (counted in the run's usage). */
  tokens: { input: number; output: number };
}
