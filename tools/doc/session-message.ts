/**
 * What is stored at `/byteseek/session/<vid>/<n>`: one message of a run — the user's input, the
 * model's answer (with its step record, agent/step-record.ts), or a tool's result. The agent loop
 * writes them (agent/providers/types.ts `ChatMessage` has this shape) and reads them back with this
 * schema on every turn, as do resume, replay and the run's page. Read loose: a field a newer
 * byteseek added is kept.
 */
import { z } from "zod";
import { docFamily } from "./read-write.js";

const TokenUsage = z.object({ inputTokens: z.number(), outputTokens: z.number() });

/** Kept with each model answer, so a run replays and compares from the tree alone. */
const StepRecordFields = z.object({
  stop: z.enum(["stop", "length", "tool_calls"]),
  usage: TokenUsage,
  at: z.number(),
  prompt: z.string(),
  system: z.string().optional(),
  tools: z.record(z.string(), z.string()).optional(),
  model: z.string().optional(),
  answer: z.string().optional(),
});

const UserFields = z.object({ role: z.literal("user"), content: z.string() });
const AssistantFields = z.object({
  role: z.literal("assistant"),
  text: z.string(),
  toolCalls: z.array(z.object({ id: z.string(), name: z.string(), argsText: z.string() })),
  step: StepRecordFields.optional(),
});
const ToolFields = z.object({
  role: z.literal("tool"),
  toolCallId: z.string(),
  name: z.string(),
  content: z.string(),
  isError: z.boolean(),
});

const SessionMessageFields = z.discriminatedUnion("role", [UserFields, AssistantFields, ToolFields]);
/** The declared fields: what a writer gives. */
export type SessionMessageFields = z.infer<typeof SessionMessageFields>;

export const SessionMessage = z.discriminatedUnion("role", [
  UserFields.loose(),
  AssistantFields.extend({ step: StepRecordFields.loose().optional() }).loose(),
  ToolFields.loose(),
]);
export type SessionMessage = z.infer<typeof SessionMessage>;

/** The session message family (tools/doc/docs.ts names it). */
export const SessionMessageDoc = docFamily<typeof SessionMessage, SessionMessageFields>(
  "a session message",
  SessionMessage,
);
