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
}
