/**
 * What is stored at `/byteseek/approval/<vid>/<n>`, declared once: the approvals read it back with
 * it (tools/approvals.ts), `GET /v1/approvals` answers and documents it (server/runtime-schemas.ts),
 * and the web page types it. Pure zod, importing nothing Node-only, so web/tsconfig reaches it.
 * Read loose at the top: an entry written by a newer byteseek keeps the fields this one does not know.
 */
import { z } from "zod";
import { ElicitContent } from "../gate/asks.js";

export const ApprovalScope = z.enum(["once", "run", "always"]);
export type ApprovalScope = z.infer<typeof ApprovalScope>;

/** A change to a declaration or prompt a person wrote, applied only once a person approves it. */
export const ProposedChange = z.object({
  key: z.string(),
  action: z.enum(["set", "del"]),
  value: z
    .object({ kind: z.string(), value: z.unknown() })
    .optional()
    .describe("the new value (kind and JSON form), for set"),
  ifVersion: z.number().int().nonnegative().describe("the version the change was proposed against"),
  diff: z.string().describe("unified diff"),
});
export type ProposedChange = z.infer<typeof ProposedChange>;

const EffectJson = z.object({
  kind: z.enum(["builtin", "shell", "http", "llm", "mcp"]),
  text: z.string().describe("what will run, on one line"),
  argv: z.array(z.string()).optional(),
  method: z.string().optional(),
  url: z.string().optional(),
  server: z.string().optional(),
  tool: z.string().optional(),
  prompt: z.string().optional(),
  ref: z.string().optional(),
  command: z.string().optional(),
});

/** What an upstream MCP server asked a person during a call (its `elicitation/create`). */
const ElicitationJson = z.object({
  server: z.string(),
  message: z.string(),
  schema: z.record(z.string(), z.unknown()),
});

const ApprovalEntryFields = z
  .object({
    state: z.enum(["pending", "approved", "denied"]),
    vid: z.string(),
    tool: z.string(),
    args: z.unknown(),
    reason: z.string().describe("why it needs a person: the rule, in words the person reads"),
    rule: z.string(),
    ts: z.number(),
    change: ProposedChange.optional().describe("a change to what a person wrote, applied only once approved"),
    decl: z
      .looseObject({ key: z.string(), modRev: z.number(), hash: z.string() })
      .optional()
      .describe("the declaration as read for the call, with its hash"),
    effect: EffectJson.optional().describe(
      "what the call will do: the command line after substitution, method and URL, upstream tool…",
    ),
    owner: z.string().optional().describe("who wrote the declaration: person, or run <vid>"),
    elicitation: ElicitationJson.optional().describe(
      "an upstream MCP server's question during the call: approve with content (fitting schema) accepts, deny declines (cancel: true cancels)",
    ),
    decision: z
      .looseObject({
        scope: ApprovalScope,
        by: z.string().describe("who decided: person (http), person (cli), person (terminal), …"),
        via: z
          .string()
          .optional()
          .describe(
            "the credential it was decided with: bearer token sha256:…, page cookie session …, terminal, MCP elicitation of session …",
          ),
        reason: z.string().optional(),
        ts: z.number(),
        action: z
          .enum(["accept", "decline", "cancel"])
          .optional()
          .describe("for an elicitation: the action sent back"),
        content: ElicitContent.optional().describe("for an elicitation accepted: the form's content"),
      })
      .optional()
      .describe("once decided: by whom and through which credential"),
    declDiff: z
      .string()
      .optional()
      .describe(
        "for a declaration changed since a person approved it for good: the diff against that version",
      ),
    interrupted: z
      .literal(true)
      .optional()
      .describe(
        "a resumed run's call interrupted with an unknown outcome, asked to run again (policy resumeUnknown: ask)",
      ),
  })
  .describe("an approval entry: the call, why it needs a person, and the decision once made");

/** Read loose: fields a newer byteseek added are kept, and written back with a decision. */
export const ApprovalEntry = ApprovalEntryFields.loose();
/** The declared fields (no index signature, so `Omit<ApprovalEntry, …>` keeps them). */
export type ApprovalEntry = z.infer<typeof ApprovalEntryFields>;
