/**
 * The answers of the runtime's routes — the tool catalogue and calls, the next prompt, the
 * approvals, the upstream MCP servers, an agent turn and the diff of two runs — declared once with zod: the routes
 * validate and document with these schemas, and the web page imports their types. Like
 * tree/http/schemas.ts it depends on nothing Node-only, so web/tsconfig reaches it.
 */
import { z } from "zod";
import { type AgentEvent, RESUME_DECISIONS, STOP_REASONS } from "../agent/events.js";
import { IMPL_KINDS, ToolAnnotations } from "../tools/catalogue/declaration-parts.js";
import { ApprovalEntry } from "../tools/doc/approval-entry.js";

export const ToolJson = z
  .object({
    name: z.string().describe("family.verb"),
    title: z.string().optional().describe("a human-readable name hosts show"),
    key: z.string().describe("where the declaration lives"),
    description: z.string(),
    snippet: z.string().optional().describe("the line in the system prompt's tool list; absent: not listed"),
    guidelines: z.array(z.string()),
    params: z.record(z.string(), z.unknown()).describe("JSON Schema of the arguments"),
    enabled: z.boolean(),
    sequential: z.boolean(),
    confirm: z.boolean().describe("denied unless the call carries an approval"),
    impl: z.enum(IMPL_KINDS).describe("how the tool runs"),
    ref: z.string().optional().describe("the built-in function a builtin impl names"),
    annotations: ToolAnnotations.optional().describe("what the declaration states the tool does (MCP hints)"),
    owner: z.string().optional().describe("the run that wrote the declaration (agent-written)"),
    hash: z
      .string()
      .optional()
      .describe("of a run's tool: the sha256 of its declaration, what a person's acceptance names"),
    accepted: z
      .boolean()
      .optional()
      .describe(
        "of a run's tool: a person accepted this version for every run (POST /v1/tools/<name>/accept)",
      ),
    blocked: z.string().optional().describe("why the policy as it stands denies every call"),
    server: z.string().optional().describe("an mcp impl's upstream server (/byteseek/mcp/<server>)"),
    upstream: z.string().optional().describe("an mcp impl's tool on that server"),
    held: z
      .boolean()
      .optional()
      .describe("an upstream MCP tool changed since a person accepted it: held until one reviews it"),
    approval: z
      .string()
      .optional()
      .describe(
        "the rule that makes every call wait for a person's approval, as the gate names it (declaration.confirm, <ref>.confirm (inherited), confirm[i] (<name>)); absent when none does or a standing approval lifts it",
      ),
  })
  .describe("a valid declaration");
export type ToolJson = z.infer<typeof ToolJson>;

export const InvalidToolJson = z.object({
  name: z.string(),
  key: z.string(),
  problems: z.array(z.string()).describe("what is wrong, one line each"),
});
export type InvalidToolJson = z.infer<typeof InvalidToolJson>;

export const ToolsJson = z.object({
  tools: z.array(ToolJson).describe("valid declarations, by name"),
  invalid: z.array(InvalidToolJson).describe("declarations left out of the tool list, with their problems"),
  policy: z
    .object({
      key: z.string(),
      problems: z.array(z.string()).describe("what is wrong, one line each"),
    })
    .optional()
    .describe("present when the policy does not validate (it was stored unchecked): every call is denied"),
  search: z
    .object({
      query: z.string(),
      hits: z.array(
        z.object({
          name: z.string(),
          score: z.number().describe("BM25F relevance: higher is better; comparable within one answer"),
          snippet: z.string().describe("one line saying what the tool does"),
        }),
      ),
    })
    .optional()
    .describe("with ?search=: the ranked hits (tools then holds those tools, in the same order)"),
});
export type ToolsJson = z.infer<typeof ToolsJson>;

export const ToolCallJson = z.object({
  key: z.string().describe("the record: /byteseek/tool/<vid>/<n>"),
  vid: z.string(),
  n: z.number().int(),
  kind: z.enum(["ok", "truncated", "vet", "arg", "denied", "runtime"]),
  isError: z.boolean(),
  state: z.enum(["started", "done"]).describe("started: running, or its process died before the result"),
  ts: z.number().describe("when the call arrived, ms since the epoch"),
  ms: z.number().describe("how long it took"),
  text: z.string().describe("the start of what the model was told"),
});
export type ToolCallJson = z.infer<typeof ToolCallJson>;

export const ToolCallsJson = z.object({
  name: z.string(),
  calls: z.array(ToolCallJson).describe("newest first"),
  complete: z
    .boolean()
    .describe("false when the records were too many to read at start: older calls may be missing"),
});
export type ToolCallsJson = z.infer<typeof ToolCallsJson>;

export const ToolResultJson = z
  .object({
    kind: z.enum(["ok", "truncated", "vet", "arg", "denied", "runtime"]),
    isError: z.boolean(),
    text: z.string().describe("exactly what the model sees"),
    details: z.record(z.string(), z.unknown()),
    record: z.string().optional().describe("the record key"),
    terminate: z.boolean().optional(),
  })
  .describe("the call's result; its kind says how it went");
export type ToolResultJson = z.infer<typeof ToolResultJson>;

export const PromptJson = z.object({
  vid: z.string(),
  system: z.string(),
  tools: z.array(z.object({ name: z.string(), description: z.string(), parameters: z.unknown() })),
  mode: z
    .enum(["all", "deferred"])
    .describe(
      "deferred: only the always-on tools and those tools.search found went in full (the policy's toolList)",
    ),
  deferred: z
    .number()
    .int()
    .describe("offered tools not sent with their schemas: the model finds them with tools.search"),
});
export type PromptJson = z.infer<typeof PromptJson>;

/** An approval entry as stored and answered (tools/doc/approval-entry.ts: declared once, read back with it). */
export const ApprovalEntryJson = ApprovalEntry;

/** One approval and where it waits: `POST /v1/approvals/<vid>/<n>` answers it decided. */
export const ApprovalJson = z.object({ key: z.string(), entry: ApprovalEntryJson });
export type ApprovalJson = z.infer<typeof ApprovalJson>;

export const PendingApprovalsJson = z.object({ pending: z.array(ApprovalJson) });
export type PendingApprovalsJson = z.infer<typeof PendingApprovalsJson>;

export const McpServerJson = z
  .object({
    server: z.string(),
    transport: z.enum(["stdio", "http"]).optional(),
    target: z.string().optional(),
    enabled: z.boolean(),
    state: z.string().describe("stopped, starting, running, stopping, backoff, failed, disabled or invalid"),
    pid: z.number().optional(),
    protocol: z
      .string()
      .optional()
      .describe("the MCP revision spoken with it while connected: 2026-07-28, or the 2025 one it answered"),
    tools: z.number(),
    toolNames: z.array(z.string()),
    held: z
      .array(z.string())
      .describe("its tools held for a person's review (changed upstream since accepted): not offered"),
    sync: z
      .object({
        state: z.enum(["ok", "error"]),
        reason: z.string(),
        ts: z.number(),
        error: z.string().optional(),
      })
      .optional(),
    error: z.string().optional(),
    auth: z
      .object({
        state: z.enum(["signed-in", "needs-sign-in", "none"]),
        expiresAt: z.number().optional().describe("when the access token expires (ms since the epoch)"),
        refreshable: z.boolean().optional().describe("a refresh token is kept: renewed before it expires"),
        needScope: z.string().optional().describe("scopes the server asked for that the sign-in lacks"),
        pending: z.boolean().optional().describe("a sign-in is under way"),
        error: z.string().optional(),
      })
      .optional()
      .describe("an HTTP server's OAuth sign-in (never its tokens)"),
  })
  .describe("a registered upstream MCP server");
export type McpServerJson = z.infer<typeof McpServerJson>;

export const McpServersJson = z.object({ servers: z.array(McpServerJson) });
export type McpServersJson = z.infer<typeof McpServersJson>;

export const McpSyncReportJson = z.object({
  server: z.string(),
  ok: z.boolean(),
  tools: z.number(),
  added: z.array(z.string()),
  changed: z.array(z.string()),
  removed: z.array(z.string()),
  conflicts: z.array(z.string()),
  held: z.array(z.string()).optional().describe("tools held for a person's review after this sync"),
  error: z.string().optional(),
});

/** What `POST /v1/mcp/sync` answers: one report per server synced. */
export const McpSyncJson = z.object({ reports: z.array(McpSyncReportJson) });
export type McpSyncJson = z.infer<typeof McpSyncJson>;

/** One held upstream tool as `GET /v1/mcp/<server>/review` shows it. */
export const HeldToolJson = z.object({
  tool: z.string().describe("the upstream tool name"),
  name: z.string().describe("the declaration's name in the tree"),
  why: z.enum(["changed", "re-added", "new"]),
  since: z.number(),
  hash: z
    .string()
    .describe("sha256 of what it says now (name, title, description, input schema, annotations)"),
  accepted: z.string().optional().describe("the hash a person last accepted"),
  acceptedBy: z.string().optional(),
  fields: z.array(z.string()).describe("the fields that differ from what was accepted"),
  diff: z.string().describe("unified diff of each differing field, accepted → upstream now"),
});

export const DroppedPinJson = z.object({
  tool: z.string().describe("the upstream tool name"),
  name: z.string().describe("the declaration's name in the tree, while it was synced"),
  accepted: z.string().describe("the hash a person had accepted"),
  acceptedBy: z.string(),
  since: z.number().describe("when the tool was seen gone upstream"),
});

export const McpReviewJson = z.object({
  server: z.string(),
  held: z.array(HeldToolJson),
  gone: z
    .array(DroppedPinJson)
    .describe("pins dropped because their tools left the upstream's list; coming back, each is held"),
});
export type McpReviewJson = z.infer<typeof McpReviewJson>;

export const AgentToolAcceptJson = z.object({
  name: z.string(),
  owner: z.string().describe("the run that declared it"),
  hash: z.string().describe("the version accepted: a later change by the run needs accepting again"),
});
export type AgentToolAcceptJson = z.infer<typeof AgentToolAcceptJson>;

export const McpAcceptJson = z.object({
  server: z.string(),
  accepted: z.array(z.string()).describe("tools accepted now: offered and callable"),
  held: z.array(z.string()).describe("tools still held"),
});
export type McpAcceptJson = z.infer<typeof McpAcceptJson>;

export const TurnJson = z
  .object({
    vid: z.string(),
    text: z.string().describe("The model's final answer, or why the turn stopped"),
    reason: z.enum(STOP_REASONS),
    steps: z.number().int(),
    records: z.array(z.string()).describe("Keys of the tool-call records the turn made"),
    calls: z.array(
      z.object({ name: z.string(), kind: z.string(), isError: z.boolean(), record: z.string().optional() }),
    ),
    usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
    resumed: z
      .array(
        z.object({
          id: z.string(),
          name: z.string(),
          decision: z.enum(RESUME_DECISIONS),
          approval: z
            .string()
            .optional()
            .describe("the approval entry a person decided for it, if one was asked"),
        }),
      )
      .optional()
      .describe("A resumed run: what became of each call its process left unanswered"),
  })
  .describe("The turn's outcome; with Accept: text/event-stream, the events as server-sent events");
export type TurnJson = z.infer<typeof TurnJson>;

/**
 * One server-sent event of a streamed turn, its `event:` field being `type`: every AgentEvent as
 * the loop emits it, except that `turn_end` carries the outcome as TurnJson, and a failure is an
 * `error` event (its data the error body's `{code, message}`) before `turn_end`.
 */
export type TurnStreamEvent =
  | Exclude<AgentEvent, { type: "turn_end" }>
  | { type: "turn_end"; result: TurnJson }
  | { type: "error"; code: string; message: string };

const RunPair = z.object({ a: z.number().int(), b: z.number().int() });

export const RunDiffJson = z.object({
  a: z.string(),
  b: z.string(),
  identical: z.boolean().describe("every step, call and result equal, and the runs ended alike"),
  steps: RunPair.describe("model answers in each run"),
  calls: RunPair.describe("tool calls in each run"),
  divergence: z
    .object({
      kind: z
        .enum(["prompt", "answer", "call", "result", "end"])
        .describe(
          "prompt: a turn's input, the system prompt or the tools sent; answer: the model's text or stop reason; call: a tool call's name or arguments; result: what a call answered; end: one run went on, or they ended otherwise",
        ),
      step: z.number().int().describe("1-based, over the whole run: the runs agree on every step before it"),
      turn: z.number().int(),
      turnStep: z.number().int().describe("the step within its turn"),
      call: z.number().int().optional().describe("1-based within the step"),
      tool: z.string().optional(),
      record: z.string().optional(),
      records: z
        .object({ a: z.string().optional(), b: z.string().optional() })
        .optional()
        .describe("the call's record in each run"),
      summary: z.string().describe("one sentence: what differed"),
      diff: z.array(z.string()).describe("a few lines: a unified diff of the two texts, or the two values"),
    })
    .optional()
    .describe("absent when identical"),
});
export type RunDiffJson = z.infer<typeof RunDiffJson>;
