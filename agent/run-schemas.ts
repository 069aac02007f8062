/**
 * The wire shapes of runs, declared once: the listing (`GET /v1/agent/runs`, `kvspace runs`, the
 * overview's `GET /v1/overview`), one run's page facts (`GET /v1/agent/runs/<vid>`) and a saved
 * replay's answer (`POST /v1/agent/runs/<vid>/replay`). Nothing here depends on Node: the web page
 * imports these as types (web/src/wire.ts).
 */
import { z } from "zod";

export const RUN_STATUSES = ["running", "interrupted", "done", "failed", "session"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** `/vthread/<vid>/client`: which MCP host a session's run belongs to (mcp/session-run.ts). */
export const RunClient = z.object({
  name: z.string().nullable(),
  version: z.string().nullable().optional(),
  transport: z.string().optional(),
});
export type RunClient = z.infer<typeof RunClient>;

export const RunSummary = z.object({
  vid: z.string(),
  status: z
    .enum(RUN_STATUSES)
    .describe(
      "running (a live process holds it), interrupted (its process died), done, failed, session (an MCP host's session: its calls, no turn loop)",
    ),
  detail: z.string().optional().describe("The status as stored, when it says more (waiting <approval key>)"),
  started: z.number().describe("Milliseconds since the epoch of the run's first message (0: none)"),
  steps: z.number().int().describe("Model calls"),
  calls: z.number().int().describe("Tool calls"),
  tokens: z.object({ input: z.number(), output: z.number() }),
  resume: z.string().optional().describe("The command that resumes an interrupted run"),
  tools: z.array(z.string()).optional().describe("The tools the run called, by name"),
  client: RunClient.optional().describe("The MCP host whose session this run is (`mcp-<client>-<n>`)"),
});
export type RunSummary = z.infer<typeof RunSummary>;

export const RunsListing = z.object({
  runs: z.array(RunSummary),
  next: z.string().optional().describe("Pass as `after` for the next page"),
});
export type RunsListing = z.infer<typeof RunsListing>;

export const ReplayOf = z.object({
  of: z.string().describe("The run replayed"),
  live: z.boolean().describe("Tools ran again (liveTools), or answered from their records"),
  executed: z.number().int().describe("Tool calls that executed"),
  diverged: z.string().optional().describe("Where the replay parted from the record, in one sentence"),
});
export type ReplayOf = z.infer<typeof ReplayOf>;

/** The powers as the wire carries them (tools/gate/powers.ts `Grant`, its checks left to the policy). */
const Powers = z.object({
  read: z.boolean(),
  write: z.boolean(),
  exec: z.boolean(),
  model: z.boolean(),
  net: z.array(z.string()).describe("Hosts its http tools and commands may reach"),
  tree: z.array(z.string()).describe("Tree key prefixes its tree tools may use"),
});

export const RunDetail = RunSummary.extend({
  model: z.string().optional().describe("The model of the run's last answer (as its step record names it)"),
  reason: z
    .string()
    .optional()
    .describe(
      "How the last turn ended: done, terminated, or <reason>: <text>; for an interrupted run, how to resume it",
    ),
  messages: z.number().int().describe("Messages in the run's session"),
  waiting: z.string().optional().describe("The approval the run waits for"),
  inProgress: z
    .string()
    .optional()
    .describe("The call in progress: the key of its record while it is `started`"),
  grant: z
    .object({ rule: z.string().describe("The policy path the grant comes from"), powers: Powers })
    .optional()
    .describe("The powers the policy grants this run now (absent when the policy does not validate)"),
  replayOf: ReplayOf.optional(),
});
export type RunDetail = z.infer<typeof RunDetail>;

const Divergence = z.object({
  kind: z.enum(["prompt", "answer", "call", "result", "end"]),
  step: z.number().int(),
  turn: z.number().int(),
  turnStep: z.number().int(),
  call: z.number().int().optional(),
  tool: z.string().optional(),
  record: z.string().optional(),
  summary: z.string(),
  diff: z.array(z.string()),
});

export const ReplayJson = z.object({
  vid: z.string().describe("The replay's own run: open it, or compare it with the run replayed"),
  of: z.string().describe("The run replayed"),
  live: z.boolean(),
  turns: z.number().int(),
  steps: z.number().int(),
  calls: z.number().int(),
  executed: z.number().int().describe("Tool calls that executed (0 unless liveTools)"),
  modelRequests: z.literal(0).describe("Requests sent to a model: every answer comes from the record"),
  notes: z
    .array(
      z.object({
        kind: z.enum(["prompt", "declaration", "unrecorded"]),
        step: z.number().int().optional(),
        text: z.string(),
        diff: z.array(z.string()).optional(),
      }),
    )
    .describe(
      "What changed since the run (a declaration's pinned hash, a prompt) without stopping the replay",
    ),
  divergence: Divergence.optional().describe(
    "Where the replay parted from the record; absent: step for step the same",
  ),
});
export type ReplayJson = z.infer<typeof ReplayJson>;

export const RunsOverview = z.object({
  counts: z
    .object({ running: z.number(), interrupted: z.number(), done: z.number(), failed: z.number() })
    .describe("Runs in each status"),
  shown: z
    .array(RunSummary)
    .describe("Running and interrupted runs, then the latest failed and done ones, newest first in each"),
});
export type RunsOverview = z.infer<typeof RunsOverview>;
